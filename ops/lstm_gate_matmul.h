// The LSTM cell's matrix products, X_t * W^T + H_{t-1} * R^T over a range of gate
// columns, behind one call: a faster GEMM replaces the reference one here and nowhere else.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/op.h"

namespace minfer {

// One direction's W [4H, D] and R [4H, H] as the products read them. Packed weights are
// K x N ([D, 4H] and [H, 4H]), so the GEMM streams along the gate columns; weights that
// are graph inputs (unknown before run) are read in ONNX's layout, transposed.
struct GateWeights {
  const float* w = nullptr;
  const float* r = nullptr;
  bool packed = false;
};

// [gate_rows, k] -> [k, gate_rows]: the packed form of W (k = D) or R (k = H).
std::vector<float> pack_gate_weights(const float* weights, int64_t gate_rows, int64_t k);

// out[b, j] = sum_d x[b, d] * W[col + j, d] + sum_k h[b, k] * R[col + j, k] for b < batch
// and j < cols, out's rows `ldo` apart. The columns are split over ctx.num_threads.
void gate_matmul(const RunContext& ctx, const GateWeights& weights, int64_t input_size, int64_t hidden_size,
                 const float* x, const float* h, int64_t batch, int64_t col, int64_t cols, float* out, int64_t ldo);

}  // namespace minfer
