// The SIMD macro- and micro-kernel, written once over xsimd batches and instantiated per
// target by gemm_f32_<MR>x<NR>_<isa>.cc, each compiled with its ISA flags. Only those
// files include this header; everything here has internal linkage so no target's code
// can be merged into another's by the linker.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <xsimd/xsimd.hpp>

#include "ops/kernels/activation_math.h"
#include "ops/kernels/gemm_kernel.h"
#include "ops/kernels/transpose.h"

namespace minfer::kernels {
namespace {

template <class Arch>
using Vec = xsimd::batch<float, Arch>;

// The activation of a tile's epilogue, fixed at compile time for the common kinds so
// the unrolled store has no per-vector switch on the kind (measured on a K = 32
// pointwise GEMM: the switch and the alpha multiply were a tenth of its tile time).
// Each computes exactly what activate() does for its kind; ActAny is any kind, through
// activate_n() over the whole tile.
struct ActNone {};
struct ActRelu {};
struct ActClip {};
struct ActAny {};

template <class Arch, class Act>
inline Vec<Arch> epilogue_activation(Vec<Arch> x, const Activation& act) {
  using V = Vec<Arch>;
  if constexpr (std::is_same_v<Act, ActRelu>) return relu_of<Arch>(x);
  if constexpr (std::is_same_v<Act, ActClip>) return clip_of<Arch>(x, V(act.alpha), V(act.beta));
}

// The rows of a tile through the epilogue: c (row stride ldc) = act(alpha * acc (+ beta *
// c) + bias + add); bias, addend and activation on the last k-block only.
template <class Arch, int ROWS, int NV, class Act>
[[gnu::always_inline]] inline void store_rows(const GemmBlock& blk, const Vec<Arch> (&acc)[ROWS][NV], int64_t i,
                                              int64_t j, float* c, int64_t ldc, const float* add) {
  using V = Vec<Arch>;
  constexpr int W = static_cast<int>(V::size), NR = NV * W;
  const V alpha(blk.alpha), beta(blk.beta);
  const bool scale = blk.alpha != 1.0f, read_c = blk.beta != 0.0f;
  const Activation* act = blk.last ? blk.activation : nullptr;
  const bool scalar_act = act && !activation_in_registers(*act);
  V x[ROWS][NV];
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      x[r][v] = scale ? acc[r][v] * alpha : acc[r][v];
      if (read_c) x[r][v] = fused_multiply_add<Arch>(beta, V::load_unaligned(c + r * ldc + v * W), x[r][v]);
      if (blk.last) {
        if (blk.row_bias) x[r][v] += V(blk.row_bias[i + r]);
        if (blk.col_bias) x[r][v] += V::load_unaligned(blk.col_bias + j + v * W);
        if (add) x[r][v] += V::load_unaligned(add + r * ldc + v * W);
        if constexpr (std::is_same_v<Act, ActRelu> || std::is_same_v<Act, ActClip>)
          x[r][v] = epilogue_activation<Arch, Act>(x[r][v], *act);
      }
    }
  }
  // The whole tile at once: the exponential kinds interleave four vectors' steps.
  if constexpr (std::is_same_v<Act, ActAny>)
    if (blk.last) activate_n<Arch, ROWS * NV>(&x[0][0], *act);
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r, c += ldc) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) x[r][v].store_unaligned(c + v * W);
    if constexpr (std::is_same_v<Act, ActAny>)
      if (scalar_act) act->apply(c, NR);
  }
}

// C tile = epilogue(alpha * acc (+ beta * C)) for a full [ROWS, NV vectors] tile. A
// transposed C is read and written through a row-major copy of the tile. Always inlined:
// called, it takes the accumulators through memory (GCC stopped inlining it when the
// transposed store made it larger; MobileNetV2 spent 8% in the call).
template <class Arch, int ROWS, int NV>
[[gnu::always_inline]] inline void store_tile(const GemmBlock& blk, const Vec<Arch> (&acc)[ROWS][NV], int64_t i,
                                              int64_t j) {
  constexpr int NR = NV * static_cast<int>(Vec<Arch>::size);
  static_assert(ROWS * NR <= kMaxTileFloats);
  alignas(64) float tile[ROWS * NR], addend_tile[ROWS * NR];
  float* const c_tile = blk.c_trans ? blk.c + j * blk.ldc + i : nullptr;
  if (c_tile && blk.beta != 0.0f) transpose(c_tile, blk.ldc, NR, ROWS, tile, NR);
  float* c = blk.c_trans ? tile : blk.c + i * blk.ldc + j;
  const int64_t ldc = blk.c_trans ? NR : blk.ldc;
  const float* add = blk.last ? blk.addend : nullptr;
  if (add && c_tile) {
    transpose(add + j * blk.ldc + i, blk.ldc, NR, ROWS, addend_tile, NR);
    add = addend_tile;
  } else if (add) {
    add += i * blk.ldc + j;
  }
  const ActivationKind kind = blk.last && blk.activation ? blk.activation->kind : ActivationKind::kNone;
  if (kind == ActivationKind::kNone)
    store_rows<Arch, ROWS, NV, ActNone>(blk, acc, i, j, c, ldc, add);
  else if (kind == ActivationKind::kRelu)
    store_rows<Arch, ROWS, NV, ActRelu>(blk, acc, i, j, c, ldc, add);
  else if (kind == ActivationKind::kClip)
    store_rows<Arch, ROWS, NV, ActClip>(blk, acc, i, j, c, ldc, add);
  else
    store_rows<Arch, ROWS, NV, ActAny>(blk, acc, i, j, c, ldc, add);
  if (c_tile) transpose(tile, NR, ROWS, NR, c_tile, blk.ldc);
}

// One [ROWS <= MR, nr <= NVU * W] tile: acc = sum over k of A panel column x B panel
// row, held in ROWS x NVU registers. NVU < NV computes only the first vectors of an edge
// panel (its other columns are padding). kPrefetchNextB: also fetch the source rows of
// the next B panel into L2, one per k (both cache lines of its NR floats: the first
// alone left packing waiting on the second, 20% of a K = 32 pointwise GEMM; fetching both
// measured 1.05-1.13x on MobileNetV1's pointwise shapes), so packing it finds them there.
// Each row is likely on its own page, beyond the hardware prefetchers; spread over the k
// loop, the prefetches overlap the FMAs (issued all at once they measured no faster).
template <class Arch, int MR, int NV, int NVU, int ROWS, bool kPrefetchNextB = false>
void tile(const GemmBlock& blk, int64_t i, int64_t j, int nr) {
  using V = Vec<Arch>;
  constexpr int W = static_cast<int>(V::size), NR = NV * W;
  const float* next_b = kPrefetchNextB ? blk.b_source + j + NR : nullptr;
  const float* a = blk.a + i * blk.k;
  const float* b = blk.b + j * blk.k;
  // C's rows (and the addend's) are far apart in memory: fetch them while the products
  // are summed (unfetched, a residual summed at 56x56 made the fused layer slower than
  // the Conv and the Add apart).
  if (!blk.c_trans) {
    float* c = blk.c + i * blk.ldc + j;
    const float* add = blk.last && blk.addend ? blk.addend + i * blk.ldc + j : nullptr;
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r) {
      __builtin_prefetch(c + r * blk.ldc, 1, 3);
      __builtin_prefetch(c + r * blk.ldc + nr - 1, 1, 3);
      if (add) {
        __builtin_prefetch(add + r * blk.ldc, 0, 3);
        __builtin_prefetch(add + r * blk.ldc + nr - 1, 0, 3);
      }
    }
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
      __builtin_prefetch(next_b + NR - 1, 0, 1);
      next_b += blk.b_ld;
    }
#pragma GCC unroll 4
    for (int v = 0; v < NVU; ++v) bv[v] = V::load_aligned(b + v * W);
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r) {
      const V ar(a[r]);
#pragma GCC unroll 4
      for (int v = 0; v < NVU; ++v) acc[r][v] = fused_multiply_add<Arch>(ar, bv[v], acc[r][v]);
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

// B panels side by side for a block of ROWS rows: enough accumulators (8 or more) for
// the two FMA pipes to overlap their latency, where a single panel's tile has 2 x ROWS.
template <int ROWS, int NV>
constexpr int wide_panels() {
  return (8 + ROWS * NV - 1) / (ROWS * NV);
}

// A [ROWS, PANELS x NR] tile of a block with few rows (a batch-1 LSTM step, a fully
// connected layer at batch 1: a GEMV): the B panels at columns j, j + NR, ... are read
// side by side, each element summed in the same k order and finished by the same
// store_tile as in tile(), so the bits do not depend on which path computed them.
template <class Arch, int MR, int NV, int ROWS, int PANELS>
void wide_tile(const GemmBlock& blk, int64_t j) {
  using V = Vec<Arch>;
  constexpr int W = static_cast<int>(V::size), NR = NV * W;
  const float* a = blk.a;
  const float* b = blk.b + j * blk.k;
  const int64_t panel_stride = NR * blk.k;
  if (!blk.c_trans) {
    float* c = blk.c + j;
#pragma GCC unroll 4
    for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 8
      for (int q = 0; q < PANELS; ++q) __builtin_prefetch(c + r * blk.ldc + q * NR, 1, 3);
  }
  V acc[ROWS][PANELS * NV];
#pragma GCC unroll 4
  for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < PANELS * NV; ++v) acc[r][v] = V(0.0f);
#pragma GCC unroll 2
  for (int64_t p = 0; p < blk.k; ++p, a += MR, b += NR) {
#pragma GCC unroll 8
    for (int q = 0; q < PANELS; ++q) {
      V bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) bv[v] = V::load_aligned(b + q * panel_stride + v * W);
#pragma GCC unroll 4
      for (int r = 0; r < ROWS; ++r) {
        const V ar(a[r]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[r][q * NV + v] = fused_multiply_add<Arch>(ar, bv[v], acc[r][q * NV + v]);
      }
    }
  }
#pragma GCC unroll 8
  for (int q = 0; q < PANELS; ++q) {
    V part[ROWS][NV];
#pragma GCC unroll 4
    for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) part[r][v] = acc[r][q * NV + v];
    store_tile<Arch, ROWS, NV>(blk, part, 0, j + q * NR);
  }
}

// A block of ROWS < MR rows: wide tiles over the full groups of panels, then the
// remaining columns panel by panel as in run_block. Returns the first column left.
template <class Arch, int MR, int NV, int ROWS>
int64_t run_wide_tiles(const GemmBlock& blk) {
  constexpr int NR = NV * static_cast<int>(Vec<Arch>::size), PANELS = wide_panels<ROWS, NV>();
  int64_t j = 0;
  for (; j + PANELS * NR <= blk.n; j += PANELS * NR) {
    for (int q = 0; q < PANELS; ++q) pack_b_panel(blk, j + q * NR, NR, NR);
    wide_tile<Arch, MR, NV, ROWS, PANELS>(blk, j);
  }
  return j;
}

// The macro-kernel: B's micro-panel [k, NR] stays in L1 while the A panels stream from L2.
template <class Arch, int MR, int NV>
void run_block(const GemmBlock& blk) {
  static_assert(NV == 2, "full and half-width edge tiles");
  constexpr int W = static_cast<int>(Vec<Arch>::size), NR = NV * W;
  constexpr auto all_rows = std::make_integer_sequence<int, MR>{};
  // 1..3 rows: one panel's tile would hold fewer than 8 accumulators.
  int64_t j0 = 0;
  if (blk.m == 1) j0 = run_wide_tiles<Arch, MR, NV, 1>(blk);
  if (blk.m == 2) j0 = run_wide_tiles<Arch, MR, NV, 2>(blk);
  if (blk.m == 3) j0 = run_wide_tiles<Arch, MR, NV, 3>(blk);
  for (int64_t j = j0; j < blk.n; j += NR) {
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
