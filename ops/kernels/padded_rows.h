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

// The indices [lo, hi) of phase p (of `stride`) that hold input columns: those whose
// column stride * i + p - pad_left lies in [0, w), clamped to the phase's length.
struct PhaseColumns {
  int64_t lo = 0, hi = 0;
};
inline PhaseColumns phase_columns(int64_t w, int64_t pad_left, int64_t stride, int64_t p, int64_t phase_len) {
  PhaseColumns c;
  c.lo = std::clamp<int64_t>(ceil_div_signed(pad_left - p, stride), 0, phase_len);
  c.hi = std::clamp<int64_t>(ceil_div_signed(w + pad_left - p, stride), c.lo, phase_len);
  return c;
}

// Copies input row src into the columns [c.lo, c.hi) of phase p of a padded row at dst.
inline void copy_phase(const float* src, int64_t pad_left, int64_t stride, int64_t p, PhaseColumns c, float* dst) {
  if (c.hi <= c.lo) return;
  const float* s = src + (stride * c.lo + p - pad_left);
  if (stride == 1)
    std::copy(s, s + (c.hi - c.lo), dst + c.lo);
  else
    for (int64_t i = c.lo; i < c.hi; ++i) dst[i] = s[stride * (i - c.lo)];
}

// Writes one whole padded row, split into `stride` phases of phase_len floats, at dst; a
// null src is a row of the vertical padding (all zeros).
inline void fill_padded_row(const float* src, int64_t w, int64_t pad_left, int64_t stride, int64_t phase_len,
                            float* dst) {
  for (int64_t p = 0; p < stride; ++p, dst += phase_len) {
    const PhaseColumns c = src ? phase_columns(w, pad_left, stride, p, phase_len) : PhaseColumns{};
    std::fill(dst, dst + c.lo, 0.0f);
    if (src) copy_phase(src, pad_left, stride, p, c, dst);
    std::fill(dst + c.hi, dst + phase_len, 0.0f);
  }
}

}  // namespace
}  // namespace minfer::kernels
