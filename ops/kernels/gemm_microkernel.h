// The SIMD macro- and micro-kernel, written once over xsimd batches and instantiated per
// target by gemm_f32_<MR>x<NR>_<isa>.cc, each compiled with its ISA flags. Only those
// files include this header; everything here has internal linkage so no target's code
// can be merged into another's by the linker.
#pragma once

#include <cstdint>
#include <utility>
#include <xsimd/xsimd.hpp>

#include "ops/kernels/gemm_kernel.h"

namespace minfer::kernels {
namespace {

template <class Arch>
using Vec = xsimd::batch<float, Arch>;

template <class Arch>
inline Vec<Arch> multiply_add(Vec<Arch> a, Vec<Arch> b, Vec<Arch> c) {
  return xsimd::fma(a, b, c);
}
#if XSIMD_WITH_AVX512F
// xsimd 8.1 has no avx512f fma (its generic one is a multiply then an add).
template <>
inline Vec<xsimd::avx512f> multiply_add(Vec<xsimd::avx512f> a, Vec<xsimd::avx512f> b, Vec<xsimd::avx512f> c) {
  return _mm512_fmadd_ps(a, b, c);
}
#endif

// The activations cheap enough to run on the registers; the others go through
// Activation::apply on the stored row, still in L1.
inline bool simd_activation(const Activation& act) {
  return act.kind == ActivationKind::kNone || act.kind == ActivationKind::kRelu || act.kind == ActivationKind::kClip ||
         act.kind == ActivationKind::kLeakyRelu;
}

template <class Arch>
inline Vec<Arch> activate(Vec<Arch> x, const Activation& act) {
  using V = Vec<Arch>;
  switch (act.kind) {
    case ActivationKind::kRelu: return xsimd::max(x, V(0.0f));
    case ActivationKind::kClip: return xsimd::min(xsimd::max(x, V(act.alpha)), V(act.beta));
    case ActivationKind::kLeakyRelu: return xsimd::select(x < V(0.0f), x * V(act.alpha), x);
    default: return x;
  }
}

// C tile = epilogue(alpha * acc (+ beta * C)) for a full [ROWS, NV vectors] tile.
template <class Arch, int ROWS, int NV>
inline void store_tile(const GemmBlock& blk, const Vec<Arch> (&acc)[ROWS][NV], int64_t i, int64_t j) {
  using V = Vec<Arch>;
  constexpr int W = static_cast<int>(V::size);
  const V alpha(blk.alpha), beta(blk.beta);
  const bool read_c = blk.beta != 0.0f;
  const Activation* act = blk.last ? blk.activation : nullptr;
  const bool scalar_act = act && !simd_activation(*act);
  float* c = blk.c + i * blk.ldc + j;
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r, c += blk.ldc) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      V x = acc[r][v] * alpha;
      if (read_c) x = multiply_add(beta, V::load_unaligned(c + v * W), x);
      if (blk.last) {
        if (blk.row_bias) x += V(blk.row_bias[i + r]);
        if (blk.col_bias) x += V::load_unaligned(blk.col_bias + j + v * W);
        if (act) x = activate<Arch>(x, *act);
      }
      x.store_unaligned(c + v * W);
    }
    if (scalar_act) act->apply(c, NV * W);
  }
}

// One [ROWS <= MR, nr <= NVU * W] tile: acc = sum over k of A panel column x B panel
// row, held in ROWS x NVU registers. NVU < NV computes only the first vectors of an edge
// panel (its other columns are padding). kPrefetchNextB: also fetch the source rows of
// the next B panel into L2, one per k, so packing it finds them there. Each row is
// likely on its own page, beyond the hardware prefetchers; spread over the k loop, the
// prefetches overlap the FMAs (issued all at once they measured no faster).
template <class Arch, int MR, int NV, int NVU, int ROWS, bool kPrefetchNextB = false>
void tile(const GemmBlock& blk, int64_t i, int64_t j, int nr) {
  using V = Vec<Arch>;
  constexpr int W = static_cast<int>(V::size), NR = NV * W;
  const float* next_b = kPrefetchNextB ? blk.b_source + j + NR : nullptr;
  const float* a = blk.a + i * blk.k;
  const float* b = blk.b + j * blk.k;
  // C's rows are far apart in memory: fetch them while the products are summed.
  float* c = blk.c + i * blk.ldc + j;
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r) {
    __builtin_prefetch(c + r * blk.ldc, 1, 3);
    __builtin_prefetch(c + r * blk.ldc + nr - 1, 1, 3);
  }
  V acc[ROWS][NVU];
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NVU; ++v) acc[r][v] = V(0.0f);
#pragma GCC unroll 4
  for (int64_t p = 0; p < blk.k; ++p, a += MR, b += NR) {
    V bv[NVU];
    if constexpr (kPrefetchNextB) {
      __builtin_prefetch(next_b, 0, 1);
      next_b += blk.b_ld;
    }
#pragma GCC unroll 4
    for (int v = 0; v < NVU; ++v) bv[v] = V::load_aligned(b + v * W);
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r) {
      const V ar(a[r]);
#pragma GCC unroll 4
      for (int v = 0; v < NVU; ++v) acc[r][v] = multiply_add(ar, bv[v], acc[r][v]);
    }
  }
  if (nr == NVU * W) {
    store_tile<Arch, ROWS, NVU>(blk, acc, i, j);
  } else {
    alignas(64) float buffer[ROWS * NVU * W];
    for (int r = 0; r < ROWS; ++r)
      for (int v = 0; v < NVU; ++v) acc[r][v].store_aligned(buffer + (r * NVU + v) * W);
    finish_tile_scalar(blk, buffer, NVU * W, i, j, ROWS, nr);
  }
}

// A tile of `rows` <= MR rows and NVU vectors, through a table of the ROWS instances.
template <class Arch, int MR, int NV, int NVU, int... Rows>
void tile_of_rows(int rows, const GemmBlock& blk, int64_t i, int64_t j, int nr, std::integer_sequence<int, Rows...>) {
  using Tile = void (*)(const GemmBlock&, int64_t, int64_t, int);
  static constexpr Tile tiles[] = {&tile<Arch, MR, NV, NVU, Rows + 1>...};
  tiles[rows - 1](blk, i, j, nr);
}

// The macro-kernel: B's micro-panel [k, NR] stays in L1 while the A panels stream from L2.
template <class Arch, int MR, int NV>
void run_block(const GemmBlock& blk) {
  static_assert(NV == 2, "full and half-width edge tiles");
  constexpr int W = static_cast<int>(Vec<Arch>::size), NR = NV * W;
  constexpr auto all_rows = std::make_integer_sequence<int, MR>{};
  for (int64_t j = 0; j < blk.n; j += NR) {
    const int nr = blk.n - j < NR ? static_cast<int>(blk.n - j) : NR;
    pack_b_panel(blk, j, nr, NR);
    for (int64_t i = 0; i < blk.m; i += MR) {
      const int rows = blk.m - i < MR ? static_cast<int>(blk.m - i) : MR;
      if (i == 0 && blk.b_source && rows == MR && nr == NR)
        tile<Arch, MR, NV, NV, MR, true>(blk, i, j, nr);
      else if (nr <= W)
        tile_of_rows<Arch, MR, NV, 1>(rows, blk, i, j, nr, all_rows);
      else if (rows == MR)
        tile<Arch, MR, NV, NV, MR>(blk, i, j, nr);
      else
        tile_of_rows<Arch, MR, NV, NV>(rows, blk, i, j, nr, all_rows);
    }
  }
}

}  // namespace
}  // namespace minfer::kernels
