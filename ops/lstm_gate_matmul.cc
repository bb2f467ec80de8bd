#include "ops/lstm_gate_matmul.h"

#include <algorithm>

#include "ops/kernels/threads.h"

namespace minfer {

GateWeights GateWeights::packed(const kernels::GemmKernel& kernel, const float* w, const float* r, int64_t input_size,
                                int64_t hidden_size, bool per_gate) {
  GateWeights g;
  g.kernel_ = &kernel;
  g.input_size_ = input_size;
  g.hidden_size_ = hidden_size;
  // W's gate rows [cols, D] (R's [cols, H]) are op(B) = their transpose, K x cols.
  const int64_t blocks = per_gate ? 4 : 1, cols = gate_columns(hidden_size, per_gate ? 0 : kAllGates);
  for (int64_t b = 0; b < blocks; ++b) {
    g.packed_w_.push_back(
        kernels::PackedMatrix::pack_b(kernel, w + b * cols * input_size, input_size, true, input_size, cols));
    g.packed_r_.push_back(
        kernels::PackedMatrix::pack_b(kernel, r + b * cols * hidden_size, hidden_size, true, hidden_size, cols));
  }
  return g;
}

int64_t GateWeights::packed_bytes(const kernels::GemmKernel& kernel, int64_t input_size, int64_t hidden_size,
                                  bool per_gate) {
  const int64_t nr = kernel.nr, blocks = per_gate ? 4 : 1;
  const int64_t padded_cols = (gate_columns(hidden_size, per_gate ? 0 : kAllGates) + nr - 1) / nr * nr;
  return checked_mul({blocks, 4, padded_cols, checked_add({input_size, hidden_size})});
}

GateWeights GateWeights::plain(const kernels::GemmKernel& kernel, const float* w, const float* r, int64_t input_size,
                               int64_t hidden_size) {
  GateWeights g;
  g.kernel_ = &kernel;
  g.w_ = w;
  g.r_ = r;
  g.input_size_ = input_size;
  g.hidden_size_ = hidden_size;
  return g;
}

kernels::GemmOperand GateWeights::operand(const float* plain, const std::vector<kernels::PackedMatrix>& packed,
                                          int64_t k, int gate) const {
  if (packed.empty()) return kernels::GemmOperand(plain + std::max(gate, 0) * hidden_size_ * k, k, /*trans=*/true);
  return packed.size() == 1 ? packed[0] : packed[static_cast<size_t>(gate)];
}

namespace {

kernels::GemmEpilogue bias_epilogue(const float* bias) {
  kernels::GemmEpilogue e;
  if (bias) {
    e.bias_kind = kernels::GemmBias::kPerColumn;
    e.bias = bias;
  }
  return e;
}

// The products run between serial element-wise work, so their threads are woken afresh
// every step.
int threads_for(const RunContext& ctx, int64_t macs, int64_t columns) {
  return kernels::threads_worth_starting(macs, columns, ctx.num_threads, kernels::Work::kBetweenSerialSteps);
}

}  // namespace

void input_matmul(const RunContext& ctx, const GateWeights& weights, int gate, const float* x, int64_t ldx,
                  int64_t rows, const float* bias, float* out, int64_t ldo, std::span<float> scratch) {
  const int64_t cols = gate_columns(weights.hidden_size(), gate);
  kernels::gemm(rows, cols, weights.input_size(), 1.0f, kernels::GemmOperand(x, ldx), weights.input(gate), 0.0f, out,
                ldo, bias_epilogue(bias), scratch, threads_for(ctx, rows * cols * weights.input_size(), cols),
                weights.kernel());
}

void recurrent_matmul(const RunContext& ctx, const GateWeights& weights, int gate, const float* h, int64_t rows,
                      const float* bias, float* out, int64_t ldo, std::span<float> scratch) {
  const int64_t hidden = weights.hidden_size(), cols = gate_columns(hidden, gate);
  kernels::gemm(rows, cols, hidden, 1.0f, kernels::GemmOperand(h, hidden), weights.recurrent(gate), 1.0f, out, ldo,
                bias_epilogue(bias), scratch, threads_for(ctx, rows * cols * hidden, cols), weights.kernel());
}

int64_t gate_matmul_scratch_floats(const kernels::GemmKernel& kernel, int64_t input_size, int64_t hidden_size, int gate,
                                   bool weights_packed, int64_t input_rows, int64_t step_rows, int threads) {
  const kernels::GemmPacked packed = weights_packed ? kernels::GemmPacked::kB : kernels::GemmPacked::kNone;
  const int64_t cols = gate_columns(hidden_size, gate);
  return std::max(kernels::gemm_workspace_bytes(kernel, input_rows, cols, input_size, threads, packed),
                  kernels::gemm_workspace_bytes(kernel, step_rows, cols, hidden_size, threads, packed)) /
         4;
}

}  // namespace minfer
