// The SIMD batch-1 product over the GEMV layout (gemv.h), instantiated per target by
// gemv_<isa>.cc with that ISA's flags. It finishes tiles with the GEMM micro-kernel's
// store_tile and finish_tile_scalar, so its results are the GEMM's bits.
#pragma once

#include "ops/kernels/gemm_microkernel.h"
#include "ops/kernels/gemv.h"

namespace minfer::kernels {
namespace {

// One group of kGemvPanels panels at column j, for k-block [k0, k0 + kb): the sums of
// that block from zero, then the GEMM's epilogue of a block (alpha, beta: C's running
// value after the first block, bias and activation after the last).
template <class Arch, int NV>
void gemv_group_block(const GemvCall& g, const GemmBlock& blk, const float* w, int64_t j) {
  using V = Vec<Arch>;
  constexpr int W = static_cast<int>(V::size), NR = NV * W, ACC = kGemvPanels * NV;
  constexpr int GROUP = kGemvPanels * NR;
  const float* x = blk.a;
  V acc[ACC];
#pragma GCC unroll 16
  for (int v = 0; v < ACC; ++v) acc[v] = V(0.0f);
  for (int64_t p = 0; p < blk.k; ++p, w += GROUP, x += g.x_stride) {
    // Every line of the row 16 k ahead (8 KiB with AVX-512), not kept in the caches: each
    // weight is read once per run. Measured against 8 and 32 rows ahead and kept lines.
#pragma GCC unroll 16
    for (int l = 0; l < GROUP; l += 16) __builtin_prefetch(w + 16 * GROUP + l, 0, 0);
    const V xv(*x);
#pragma GCC unroll 16
    for (int v = 0; v < ACC; ++v) acc[v] = fused_multiply_add<Arch>(xv, V::load_aligned(w + v * W), acc[v]);
  }
#pragma GCC unroll 8
  for (int q = 0; q < kGemvPanels; ++q) {
    const int64_t jq = j + q * NR;
    if (jq >= g.n) break;
    if (jq + NR <= g.n) {
      V part[1][NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) part[0][v] = acc[q * NV + v];
      store_tile<Arch, 1, NV>(blk, part, 0, jq);
    } else {  // the edge panel, finished as the GEMM's edge tiles are
      alignas(64) float buffer[NR];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[q * NV + v].store_aligned(buffer + v * W);
      finish_tile_scalar(blk, buffer, NR, 0, jq, 1, static_cast<int>(g.n - jq));
    }
  }
}

template <class Arch, int NV>
void run_gemv(const GemvCall& g) {
  constexpr int GROUP = kGemvPanels * NV * static_cast<int>(Vec<Arch>::size);
  const KBlocks blocks(g.k, g.kc);
  GemmBlock blk = gemv_block(g);
  for (int64_t j = g.j0; j < g.j1; j += GROUP) {
    const float* w = g.w + j * g.k;
    for (int64_t i = 0; i < blocks.count; ++i) {
      const int64_t k0 = blocks.begin(i);
      blk.k = blocks.length(i);
      blk.a = g.x + k0 * g.x_stride;
      blk.beta = i == 0 ? g.beta : 1.0f;
      blk.last = i + 1 == blocks.count;
      gemv_group_block<Arch, NV>(g, blk, w + k0 * GROUP, j);
    }
  }
}

}  // namespace
}  // namespace minfer::kernels
