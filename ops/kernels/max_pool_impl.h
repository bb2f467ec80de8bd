// The max pool row kernels, written once over a vector type and instantiated per target
// by max_pool_<isa>.cc, each compiled with its ISA flags. Only those files include this
// header; everything here has internal linkage.
#pragma once

#include <cstdint>
#include <limits>

#include "ops/kernels/max_pool.h"
#include "ops/kernels/padded_rows.h"
#include "ops/kernels/simd.h"

namespace minfer::kernels {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// nan_max of ops/op_helpers.h lane by lane: v replaces acc when acc < v or v is NaN, so
// a NaN sticks and ties keep the earlier tap.
template <class Arch>
inline xsimd::batch<float, Arch> max_keep_nan(xsimd::batch<float, Arch> acc, xsimd::batch<float, Arch> v) {
  return xsimd::select((acc < v) || xsimd::isnan(v), v, acc);
}

// Up to NV output vectors of one row side by side, each its own chain of taps (a tap's
// max waits for the previous one's: independent chains keep the vector units busy).
template <class V, int NV>
void max_pool_vectors(const float* const* rows, int n, const int64_t* tap_offsets, int64_t kw, int64_t ox,
                      int64_t out_w, float* yr) {
  constexpr int64_t W = V::size;
  V acc[NV];
  for (int v = 0; v < NV; ++v) acc[v] = V(kMinusInf);
  for (int r = 0; r < n; ++r)
    for (int64_t kj = 0; kj < kw; ++kj) {
      const float* src = rows[r] + tap_offsets[kj] + ox;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[v] = max_keep_nan(acc[v], V::load_unaligned(src + v * W));
    }
  for (int v = 0; v < NV; ++v) {
    const int64_t at = ox + v * W;
    if (at + W <= out_w)
      acc[v].store_unaligned(yr + at);
    else
      store_first(acc[v], yr + at, out_w - at);
  }
}

template <class V, int S>
void max_pool_planes(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end, float* scratch) {
  constexpr int64_t W = V::size;
  const Window2d& win = s.win;
  const int64_t phase_len = padded_phase_len(s.out_w, W, win.kw, 1, S), len = S * phase_len;
  int64_t tap_offsets[kMaxPoolMaxWindow];  // where window column kj reads, from a row's start
  for (int64_t kj = 0; kj < win.kw; ++kj) tap_offsets[kj] = (kj % S) * phase_len + kj / S;
  const float* rows[kMaxPoolMaxWindow];  // the window rows inside the input
  for (int64_t p = begin; p < end; ++p) {
    const float* xp = x + p * s.h * s.w;
    float* yp = y + p * s.out_h * s.out_w;
    for (int64_t r = 0; r < s.h; ++r) {
      if constexpr (S == 2)
        fill_padded_row_stride2<V>(xp + r * s.w, s.w, win.pad_left, phase_len, scratch + r * len, kMinusInf);
      else
        fill_padded_row(xp + r * s.w, s.w, win.pad_left, S, phase_len, scratch + r * len, kMinusInf);
    }
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      // Window rows in order, those outside the input skipped (they would hold only -inf).
      int n = 0;
      for (int64_t ki = 0; ki < win.kh; ++ki) {
        const int64_t iy = oy * win.sh - win.pad_top + ki * win.dh;
        if (iy >= 0 && iy < s.h) rows[n++] = scratch + iy * len;
      }
      float* yr = yp + oy * s.out_w;
      int64_t ox = 0;
      for (; ox + 4 * W < s.out_w; ox += 4 * W) max_pool_vectors<V, 4>(rows, n, tap_offsets, win.kw, ox, s.out_w, yr);
      switch ((s.out_w - ox + W - 1) / W) {  // the last 1 to 4 vectors, the last maybe partial
        case 4: max_pool_vectors<V, 4>(rows, n, tap_offsets, win.kw, ox, s.out_w, yr); break;
        case 3: max_pool_vectors<V, 3>(rows, n, tap_offsets, win.kw, ox, s.out_w, yr); break;
        case 2: max_pool_vectors<V, 2>(rows, n, tap_offsets, win.kw, ox, s.out_w, yr); break;
        case 1: max_pool_vectors<V, 1>(rows, n, tap_offsets, win.kw, ox, s.out_w, yr); break;
        default: break;
      }
    }
  }
}

template <class V>
constexpr MaxPoolKernel max_pool_kernel(Isa isa, const char* name, int stride) {
  return {name, isa, static_cast<int>(V::size), stride, stride == 1 ? &max_pool_planes<V, 1> : &max_pool_planes<V, 2>};
}

}  // namespace
}  // namespace minfer::kernels
