// Padded, stride-split input rows: how the direct convolution and max pool kernels see
// their input, so their inner loops read every tap with one unaligned vector load and no
// bounds checks. Internal linkage: each target's translation unit compiles its own copy.
//
// A padded row is P(c) = x[c - pad_left] for 0 <= c - pad_left < w, else `pad` (0 for a
// convolution, -inf for a max pool). With stride
// s it is stored as s phases of phase_len floats, phase p holding P(s * i + p); output
// column ox's tap at padded offset t (kernel column times dilation) then reads phase
// t % s at index ox + t / s, so consecutive output columns read consecutive floats.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ops/kernels/simd.h"

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
// null src is a row of the vertical padding (all `pad`).
inline void fill_padded_row(const float* src, int64_t w, int64_t pad_left, int64_t stride, int64_t phase_len,
                            float* dst, float pad = 0.0f) {
  for (int64_t p = 0; p < stride; ++p, dst += phase_len) {
    const PhaseColumns c = src ? phase_columns(w, pad_left, stride, p, phase_len) : PhaseColumns{};
    std::fill(dst, dst + c.lo, pad);
    if (src) copy_phase(src, pad_left, stride, p, c, dst);
    std::fill(dst + c.hi, dst + phase_len, pad);
  }
}

// Copies input row x into both phases of a stride-2 padded row at dst: pairs of input
// columns that both phases take go a vector at a time through a register deinterleave
// (a plain strided loop is what dominated stride-2 layers), the ends one by one.
template <class V>
inline void copy_row_stride2(const float* x, int64_t pad_left, const PhaseColumns (&columns)[2], int64_t phase_len,
                             float* dst) {
  constexpr int64_t W = V::size;
  // Phase pa holds x's even columns (x[2j] at index j + ia), phase pb the odd ones.
  const int pa = static_cast<int>(pad_left % 2), pb = 1 - pa;
  const int64_t ia = (pad_left - pa) / 2, ib = (pad_left + 1 - pb) / 2;
  float* even = dst + pa * phase_len + ia;
  float* odd = dst + pb * phase_len + ib;
  const int64_t a_lo = columns[pa].lo - ia, a_hi = columns[pa].hi - ia;
  const int64_t b_lo = columns[pb].lo - ib, b_hi = columns[pb].hi - ib;
  const int64_t lo = std::max(a_lo, b_lo), hi = std::max(lo, std::min(a_hi, b_hi));
  int64_t j = lo;
  for (; j + W <= hi; j += W) deinterleave_vector<V>(x + 2 * j, even + j, odd + j);
  if constexpr (W > 4)
    for (; j + 4 <= hi; j += 4) deinterleave_4(x + 2 * j, even + j, odd + j);
  for (int64_t k = a_lo; k < std::min(lo, a_hi); ++k) even[k] = x[2 * k];
  for (int64_t k = std::max(j, a_lo); k < a_hi; ++k) even[k] = x[2 * k];
  for (int64_t k = b_lo; k < std::min(lo, b_hi); ++k) odd[k] = x[2 * k + 1];
  for (int64_t k = std::max(j, b_lo); k < b_hi; ++k) odd[k] = x[2 * k + 1];
}

// fill_padded_row for stride 2, with the copy of copy_row_stride2.
template <class V>
inline void fill_padded_row_stride2(const float* src, int64_t w, int64_t pad_left, int64_t phase_len, float* dst,
                                    float pad = 0.0f) {
  if (!src) {
    std::fill(dst, dst + 2 * phase_len, pad);
    return;
  }
  const PhaseColumns columns[2] = {phase_columns(w, pad_left, 2, 0, phase_len),
                                   phase_columns(w, pad_left, 2, 1, phase_len)};
  for (int p = 0; p < 2; ++p) {
    float* phase = dst + p * phase_len;
    std::fill(phase, phase + columns[p].lo, pad);
    std::fill(phase + columns[p].hi, phase + phase_len, pad);
  }
  copy_row_stride2<V>(src, pad_left, columns, phase_len, dst);
}

}  // namespace
}  // namespace minfer::kernels
