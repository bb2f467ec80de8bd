// The portable target for CPUs without AVX2+FMA: plain C++ (the compiler may vectorise
// it with the baseline SSE2), the same packing and blocking as the SIMD kernels.
#include "ops/kernels/gemm_kernel.h"

namespace minfer::kernels {
namespace {

constexpr int kRows = 4, kCols = 8;

void run_block_scalar(const GemmBlock& blk) {
  for (int64_t j = 0; j < blk.n; j += kCols) {
    const int nr = blk.n - j < kCols ? static_cast<int>(blk.n - j) : kCols;
    pack_b_panel(blk, j, nr, kCols);
    for (int64_t i = 0; i < blk.m; i += kRows) {
      const int rows = blk.m - i < kRows ? static_cast<int>(blk.m - i) : kRows;
      const float* a = blk.a + i * blk.k;
      const float* b = blk.b + j * blk.k;
      float acc[kRows][kCols] = {};
      // Only the block's rows: a panel packed on the fly holds no others (gemm_pack.h).
      for (int64_t p = 0; p < blk.k; ++p, a += kRows, b += kCols)
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < kCols; ++c) acc[r][c] += a[r] * b[c];
      finish_tile_scalar(blk, &acc[0][0], kCols, i, j, rows, nr);
    }
  }
}

}  // namespace

const GemmKernel gemm_f32_4x8_scalar = {"gemm_f32_4x8_scalar", Isa::kScalar, kRows, kCols, 128, 256, 4096,
                                        &run_block_scalar};

}  // namespace minfer::kernels
