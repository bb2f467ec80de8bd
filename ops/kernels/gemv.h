// Batch-1 products (op(A) has one row: a fully connected layer or a MatMul on one
// vector) against constant weights packed for them: C[1, N] = epilogue(alpha * x B).
// The GEMM's panels put each k-block of the weights in a different place, so a row
// walks several streams at once and stores C after every k-block; here B is packed as
// groups of kGemvPanels of the kernel's NR-column panels, with all of K of a group
// contiguous, so each thread streams its share of the weights once, front to back.
// Each element is summed in the GEMM's k-blocks and order and finished by the GEMM's
// own epilogue, so its bits equal the GEMM's for the same row (tested).
#pragma once

#include <cstdint>

#include "ops/kernels/gemm.h"

namespace minfer::kernels {

// Panels per group: 8 accumulators for a row (2 vectors per panel), enough to keep
// both FMA pipes busy; a group is 128 columns with AVX-512, 64 with AVX2, 32 scalar.
inline constexpr int kGemvPanels = 4;

// One thread's share of a batch-1 product: columns [j0, j1) (j0 a multiple of the
// group width; j1 a multiple of it or N).
struct GemvCall {
  const float* x = nullptr;  // op(A)'s row: x[p * x_stride], p < K
  int64_t x_stride = 1;
  const float* w = nullptr;  // the packed groups (PackedMatrix::pack_b_for_gemv)
  int64_t n = 0, k = 0, kc = 0;
  int64_t j0 = 0, j1 = 0;
  float alpha = 1.0f, beta = 0.0f;  // beta == 0: y is not read
  float* y = nullptr;
  const GemmEpilogue* epilogue = nullptr;
};

// The GEMM block fields every k-block of a call shares: C (y), alpha, the bias and the
// activation; each target sets the block's k, beta and last.
GemmBlock gemv_block(const GemvCall& call);

// The threads a batch-1 product of N columns and depth K runs on, of `threads`.
int gemv_threads(int64_t n, int64_t k, int threads, const GemmKernel& kernel);

// One per target, each in its own translation unit (gemv_<isa>.cc). The scalar one runs
// the 8-column panels of gemm_f32_4x8_scalar, the SIMD ones two vectors per panel.
void gemv_scalar(const GemvCall& call);
void gemv_avx2(const GemvCall& call);
void gemv_avx512(const GemvCall& call);

}  // namespace minfer::kernels
