// Packing op(A) and op(B) blocks into the panels the micro-kernels stream (see GemmBlock),
// zero-padded but for an on-the-fly A block: used per run for plain operands and once by
// PackedMatrix.
#pragma once

#include <cstdint>

namespace minfer::kernels {

// op(A) rows [i0, i0 + rows) and k [p0, p0 + kc) into ceil(rows / mr) panels of mr rows
// per k. `trans`: A is stored [K, M]. Without `zero_pad` a last panel's lines past
// `rows` are left as they were: for a block packed on the fly, whose micro-kernel
// computes only the block's rows (GemmBlock::m), zeroing an mr-row panel for a GEMV's
// one row was most of its packing (a batch-1 LSTM step).
void pack_a_block(const float* a, int64_t lda, bool trans, int64_t i0, int64_t rows, int64_t p0, int64_t kc, int mr,
                  float* dst, bool zero_pad = true);

// op(B) k [p0, p0 + kc) and columns [j0, j0 + cols) into ceil(cols / nr) panels of nr
// columns per k. `trans`: B is stored [N, K].
void pack_b_block(const float* b, int64_t ldb, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t cols, int nr,
                  float* dst);

}  // namespace minfer::kernels
