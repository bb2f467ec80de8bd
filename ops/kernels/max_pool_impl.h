// The max pool kernels, written once over a vector type and instantiated per target by
// max_pool_<isa>.cc, each compiled with its ISA flags. Only those files include this
// header; everything here has internal linkage.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ops/kernels/max_pool.h"
#include "ops/kernels/padded_rows.h"
#include "ops/kernels/simd.h"

namespace minfer::kernels {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// nan_max of ops/op_helpers.h lane by lane: v replaces acc when acc < v or v is NaN, so a
// NaN sticks and ties keep the earlier tap. MAXPS(a, b) is a > b ? a : b, b also when
// either is NaN: MAXPS(v, acc) is nan_max wherever v is not NaN, so only a NaN v needs
// the select (two instructions a tap on AVX-512, three on AVX2, against four).
template <class Arch>
inline xsimd::batch<float, Arch> max_keep_nan(xsimd::batch<float, Arch> acc, xsimd::batch<float, Arch> v) {
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_same_v<Arch, xsimd::avx512f>)
    return _mm512_mask_max_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v, acc);
#endif
#if XSIMD_WITH_AVX2
  if constexpr (std::is_same_v<Arch, xsimd::avx2>)
    return _mm256_blendv_ps(_mm256_max_ps(v, acc), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
#endif
  return xsimd::select((acc < v) || xsimd::isnan(v), v, acc);
}

// NV vectors of outputs side by side from plane position `at` on, each its own chain of
// taps in window order (a tap's max waits for the previous one's: independent chains keep
// the vector units busy), stored at out.
template <class V, int NV>
inline void max_pool_vectors(const float* at, const int64_t* taps, int n_taps, float* out) {
  constexpr int64_t W = V::size;
  V acc[NV];
  // The first tap as it is: nan_max(-inf, v) is v.
  for (int v = 0; v < NV; ++v) acc[v] = V::load_unaligned(at + taps[0] + v * W);
  for (int t = 1; t < n_taps; ++t) {
    const float* src = at + taps[t];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[v] = max_keep_nan(acc[v], V::load_unaligned(src + v * W));
  }
  for (int v = 0; v < NV; ++v) acc[v].store_unaligned(out + v * W);
}

// `count` vectors of outputs, one after the other, from plane position `at` on to out.
template <class V>
inline void max_pool_run(const float* at, int64_t count, const int64_t* taps, int n_taps, float* out) {
  constexpr int64_t W = V::size;
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) max_pool_vectors<V, 4>(at + i * W, taps, n_taps, out + i * W);
  switch (count - i) {
    case 3: max_pool_vectors<V, 3>(at + i * W, taps, n_taps, out + i * W); break;
    case 2: max_pool_vectors<V, 2>(at + i * W, taps, n_taps, out + i * W); break;
    case 1: max_pool_vectors<V, 1>(at + i * W, taps, n_taps, out + i * W); break;
    default: break;
  }
}

// Copies input row xr into phase row `dst` (the first column phase's; the others follow
// phase_floats apart), leaving the border's -inf as it is.
template <class V, int S>
inline void copy_row(const float* xr, const PoolShape& s, const MaxPoolLayout& l, float* dst) {
  const int64_t pad_left = s.win.pad_left;
  if constexpr (S == 1) {
    copy_floats<V>(xr, std::min(s.w, l.pitch - pad_left), dst + pad_left);
  } else {
    const PhaseColumns columns[2] = {phase_columns(s.w, pad_left, 2, 0, l.pitch),
                                     phase_columns(s.w, pad_left, 2, 1, l.pitch)};
    copy_row_stride2<V>(xr, pad_left, columns, l.phase_floats, dst);
  }
}

template <class V, int S>
void max_pool_planes(const PoolShape& s, const MaxPoolLayout& l, const float* x, float* y, int64_t begin, int64_t end,
                     float* scratch) {
  constexpr int64_t W = V::size;
  const Window2d& win = s.win;
  // Where each window tap reads, from an output's position in the phase planes.
  int64_t taps[kMaxPoolMaxWindow * kMaxPoolMaxWindow];
  int n_taps = 0;
  for (int64_t ki = 0; ki < win.kh; ++ki)
    for (int64_t kj = 0; kj < win.kw; ++kj) {
      const int64_t phase = (ki * win.dh % win.sh) * S + kj % S;
      taps[n_taps++] = phase * l.phase_floats + ki * win.dh / win.sh * l.pitch + kj / S;
    }
  // The border: every plane's copy writes the same interior.
  std::fill(scratch, scratch + l.phases * l.phase_floats, kMinusInf);
  float* out = scratch + l.phases * l.phase_floats;
  for (int64_t p = begin; p < end; ++p) {
    const float* xp = x + p * s.h * s.w;
    float* yp = y + p * s.out_h * s.out_w;
    for (int64_t iy = 0; iy < s.h; ++iy) {
      const int64_t r = iy + win.pad_top, row = r / win.sh;
      if (row < l.rows)
        copy_row<V, S>(xp + iy * s.w, s, l, scratch + (r % win.sh) * S * l.phase_floats + row * l.pitch);
    }
    if (l.whole_plane) {
      max_pool_run<V>(scratch, l.out_floats / W, taps, n_taps, out);
      for (int64_t oy = 0; oy < s.out_h; ++oy) copy_floats<V>(out + oy * l.pitch, s.out_w, yp + oy * s.out_w);
      continue;
    }
    // Along each row (out_w >= W): whole vectors, the last one ending at out_w (its
    // columns already stored get the same values again).
    const int64_t full = s.out_w / W;
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      const float* at = scratch + oy * l.pitch;
      float* yr = yp + oy * s.out_w;
      max_pool_run<V>(at, full, taps, n_taps, yr);
      if (full * W < s.out_w) max_pool_vectors<V, 1>(at + s.out_w - W, taps, n_taps, yr + s.out_w - W);
    }
  }
}

template <class V>
constexpr MaxPoolKernel max_pool_kernel(Isa isa, const char* name, int stride) {
  return {name, isa, static_cast<int>(V::size), stride, stride == 1 ? &max_pool_planes<V, 1> : &max_pool_planes<V, 2>};
}

}  // namespace
}  // namespace minfer::kernels
