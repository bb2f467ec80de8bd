// Zero-padded, stride-split input rows: how the direct convolution kernels see their
// input, so their inner loops read every tap with one unaligned vector load and no
// bounds checks. Internal linkage: each target's translation unit compiles its own copy.
//
// A padded row is P(c) = x[c - pad_left] for 0 <= c - pad_left < w, else 0. With stride
// s it is stored as s phases of phase_len floats, phase p holding P(s * i + p); output
// column ox's tap at padded offset t (kernel column times dilation) then reads phase
// t % s at index ox + t / s, so consecutive output columns read consecutive floats.
#pragma once

#include <algorithm>
#include <cstdint>

namespace minfer::kernels {
namespace {

inline int64_t ceil_div_signed(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

// Floats per phase for out_w output columns computed in whole vectors of `lanes`: the
// last vector reads up to round_up(out_w, lanes) - 1 plus the largest tap offset.
inline int64_t padded_phase_len(int64_t out_w, int64_t lanes, int64_t kw, int64_t dw, int64_t sw) {
  return (out_w + lanes - 1) / lanes * lanes + (kw - 1) * dw / sw;
}

// Writes one padded row, split into `stride` phases of phase_len floats, at dst; a null
// src is a row of the vertical padding (all zeros).
inline void fill_padded_row(const float* src, int64_t w, int64_t pad_left, int64_t stride, int64_t phase_len,
                            float* dst) {
  for (int64_t p = 0; p < stride; ++p, dst += phase_len) {
    // Indices i whose column stride * i + p - pad_left lies in [0, w).
    int64_t lo = 0, hi = 0;
    if (src) {
      lo = std::clamp<int64_t>(ceil_div_signed(pad_left - p, stride), 0, phase_len);
      hi = std::clamp<int64_t>(ceil_div_signed(w + pad_left - p, stride), lo, phase_len);
    }
    std::fill(dst, dst + lo, 0.0f);
    if (hi > lo) {
      const float* s = src + (stride * lo + p - pad_left);
      if (stride == 1)
        std::copy(s, s + (hi - lo), dst + lo);
      else
        for (int64_t i = lo; i < hi; ++i) dst[i] = s[stride * (i - lo)];
    }
    std::fill(dst + hi, dst + phase_len, 0.0f);
  }
}

}  // namespace
}  // namespace minfer::kernels
