#include "ops/gate_matmul.h"

#include <algorithm>
#include <stdexcept>

#include "ops/kernels/threads.h"

namespace minfer {

namespace {

int64_t span_columns(int64_t hidden_size, GateSpan span) {
  return span.count * hidden_size;
}

}  // namespace

GateWeights GateWeights::packed(const kernels::GemmKernel& kernel, const float* w, const float* r, int64_t input_size,
                                int64_t hidden_size, std::span<const GateSpan> w_blocks,
                                std::span<const GateSpan> r_blocks) {
  GateWeights g;
  g.kernel_ = &kernel;
  g.input_size_ = input_size;
  g.hidden_size_ = hidden_size;
  // A block's rows of W [cols, D] (R [cols, H]) are op(B) = their transpose, K x cols.
  auto pack = [&](const float* m, int64_t k, std::span<const GateSpan> blocks, std::vector<Block>& out) {
    for (const GateSpan& s : blocks)
      out.push_back({s, kernels::PackedMatrix::pack_b(kernel, m + s.first * hidden_size * k, k, true, k,
                                                      span_columns(hidden_size, s))});
  };
  pack(w, input_size, w_blocks, g.packed_w_);
  pack(r, hidden_size, r_blocks, g.packed_r_);
  return g;
}

int64_t GateWeights::packed_bytes(const kernels::GemmKernel& kernel, int64_t input_size, int64_t hidden_size,
                                  std::span<const GateSpan> w_blocks, std::span<const GateSpan> r_blocks) {
  const int64_t nr = kernel.nr;
  auto bytes = [&](int64_t k, std::span<const GateSpan> blocks) {
    int64_t sum = 0;
    for (const GateSpan& s : blocks) {
      const int64_t padded_cols = (checked_mul({s.count, hidden_size}) + nr - 1) / nr * nr;
      sum = checked_add({sum, checked_mul({4, padded_cols, k})});
    }
    return sum;
  };
  return checked_add({bytes(input_size, w_blocks), bytes(hidden_size, r_blocks)});
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

kernels::GemmOperand GateWeights::operand(const float* plain, const std::vector<Block>& packed, int64_t k,
                                          GateSpan span) const {
  if (packed.empty()) return kernels::GemmOperand(plain + span.first * hidden_size_ * k, k, /*trans=*/true);
  for (const Block& b : packed)
    if (b.span == span) return b.matrix;
  throw std::logic_error("gate weights: a product over a span that was not packed");
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

void input_matmul(const RunContext& ctx, const GateWeights& weights, GateSpan span, const float* x, int64_t ldx,
                  int64_t rows, const float* bias, float* out, int64_t ldo, std::span<float> scratch) {
  const int64_t cols = span_columns(weights.hidden_size(), span);
  kernels::gemm(rows, cols, weights.input_size(), 1.0f, kernels::GemmOperand(x, ldx), weights.input(span), 0.0f, out,
                ldo, bias_epilogue(bias), scratch, threads_for(ctx, rows * cols * weights.input_size(), cols),
                weights.kernel());
}

void recurrent_matmul(const RunContext& ctx, const GateWeights& weights, GateSpan span, const float* h, int64_t rows,
                      const float* bias, float* out, int64_t ldo, bool accumulate, std::span<float> scratch) {
  const int64_t hidden = weights.hidden_size(), cols = span_columns(hidden, span);
  kernels::gemm(rows, cols, hidden, 1.0f, kernels::GemmOperand(h, hidden), weights.recurrent(span),
                accumulate ? 1.0f : 0.0f, out, ldo, bias_epilogue(bias), scratch,
                threads_for(ctx, rows * cols * hidden, cols), weights.kernel());
}

int64_t gate_matmul_scratch_floats(const kernels::GemmKernel& kernel, int64_t input_size, int64_t hidden_size,
                                   GateSpan input_span, GateSpan recurrent_span, bool weights_packed,
                                   int64_t input_rows, int64_t step_rows, int threads) {
  const kernels::GemmPacked packed = weights_packed ? kernels::GemmPacked::kB : kernels::GemmPacked::kNone;
  return std::max(kernels::gemm_workspace_bytes(kernel, input_rows, span_columns(hidden_size, input_span), input_size,
                                                threads, packed),
                  kernels::gemm_workspace_bytes(kernel, step_rows, span_columns(hidden_size, recurrent_span),
                                                hidden_size, threads, packed)) /
         4;
}

}  // namespace minfer
