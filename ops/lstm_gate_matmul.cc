#include "ops/lstm_gate_matmul.h"

#include <algorithm>

#include "ops/reference/gemm.h"

namespace minfer {

std::vector<float> pack_gate_weights(const float* weights, int64_t gate_rows, int64_t k) {
  std::vector<float> packed(static_cast<size_t>(gate_rows * k));
  for (int64_t j = 0; j < gate_rows; ++j)
    for (int64_t p = 0; p < k; ++p) packed[p * gate_rows + j] = weights[j * k + p];
  return packed;
}

void gate_matmul(const RunContext& ctx, const GateWeights& weights, int64_t input_size, int64_t hidden_size,
                 const float* x, const float* h, int64_t batch, int64_t col, int64_t cols, float* out, int64_t ldo) {
  const int64_t gate_rows = 4 * hidden_size;
  // Columns [c0, c0 + n) of the product; the second GEMM accumulates onto the first.
  auto columns = [&](int64_t c0, int64_t n) {
    float* y = out + (c0 - col);
    if (weights.packed) {
      reference::gemm(false, false, batch, n, input_size, 1.0f, x, input_size, weights.w + c0, gate_rows, 0.0f, y, ldo);
      reference::gemm(false, false, batch, n, hidden_size, 1.0f, h, hidden_size, weights.r + c0, gate_rows, 1.0f, y,
                      ldo);
    } else {
      reference::gemm(false, true, batch, n, input_size, 1.0f, x, input_size, weights.w + c0 * input_size, input_size,
                      0.0f, y, ldo);
      reference::gemm(false, true, batch, n, hidden_size, 1.0f, h, hidden_size, weights.r + c0 * hidden_size,
                      hidden_size, 1.0f, y, ldo);
    }
  };
  const int64_t parts = std::min<int64_t>(ctx.num_threads, cols);
  if (parts <= 1) {
    columns(col, cols);
    return;
  }
#pragma omp parallel for num_threads(parts) schedule(static)
  for (int64_t p = 0; p < parts; ++p) {
    const int64_t c0 = col + cols * p / parts, c1 = col + cols * (p + 1) / parts;
    columns(c0, c1 - c0);
  }
}

}  // namespace minfer
