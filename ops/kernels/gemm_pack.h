// Packing op(A) and op(B) blocks into the zero-padded panels the micro-kernels stream
// (see GemmBlock): used per run for plain operands and once by PackedMatrix.
#pragma once

#include <cstdint>

namespace minfer::kernels {

// op(A) rows [i0, i0 + rows) and k [p0, p0 + kc) into ceil(rows / mr) panels of mr rows
// per k. `trans`: A is stored [K, M].
void pack_a_block(const float* a, int64_t lda, bool trans, int64_t i0, int64_t rows, int64_t p0, int64_t kc, int mr,
                  float* dst);

// op(B) k [p0, p0 + kc) and columns [j0, j0 + cols) into ceil(cols / nr) panels of nr
// columns per k. `trans`: B is stored [N, K].
void pack_b_block(const float* b, int64_t ldb, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t cols, int nr,
                  float* dst);

}  // namespace minfer::kernels
