// Plain scalar GEMM: the portable path and the oracle for the fast kernels.
#pragma once

#include <cstdint>

namespace minfer::reference {

// Row-major C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, op = optional transpose.
// beta == 0 overwrites C (NaNs already in C do not leak through).
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace minfer::reference
