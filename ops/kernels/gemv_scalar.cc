// The portable batch-1 product: groups of 4 panels of gemm_f32_4x8_scalar's 8 columns,
// summed as that kernel sums them and finished by the same finish_tile_scalar.
#include <algorithm>

#include "ops/kernels/gemv.h"

namespace minfer::kernels {

void gemv_scalar(const GemvCall& g) {
  constexpr int kNr = 8, kGroup = kGemvPanels * kNr;
  const KBlocks blocks(g.k, g.kc);
  GemmBlock blk = gemv_block(g);
  for (int64_t j = g.j0; j < g.j1; j += kGroup) {
    for (int64_t i = 0; i < blocks.count; ++i) {
      const int64_t k0 = blocks.begin(i);
      blk.k = blocks.length(i);
      blk.beta = i == 0 ? g.beta : 1.0f;
      blk.last = i + 1 == blocks.count;
      const float* w = g.w + j * g.k + k0 * kGroup;
      const float* x = g.x + k0 * g.x_stride;
      float acc[kGroup] = {};
      for (int64_t p = 0; p < blk.k; ++p, w += kGroup, x += g.x_stride)
        for (int c = 0; c < kGroup; ++c) acc[c] += *x * w[c];
      for (int q = 0; q < kGemvPanels && j + q * kNr < g.n; ++q) {
        const int64_t jq = j + q * kNr;
        finish_tile_scalar(blk, acc + q * kNr, kNr, 0, jq, 1, static_cast<int>(std::min<int64_t>(kNr, g.n - jq)));
      }
    }
  }
}

}  // namespace minfer::kernels
