// RNN (ONNX opset 14: Ht = f(Xt*W^T + Ht-1*R^T + Wb + Rb), f = Tanh or Relu) over
// ops/recurrent_op.cc's shared op and kernel, one RnnCell step per time step and
// direction, under the plans of docs/gru.md: "minimal" keeps H and one B x H scratch;
// "fused" projects every step's input in one GEMM before the first step ([seq, B, H]).
#include <fmt/format.h>

#include <algorithm>

#include "ops/recurrent_op.h"

namespace minfer {
namespace {

constexpr GateSpan kGate{0, 1};

class RnnCell final : public RecurrentCell {
 public:
  explicit RnnCell(const CellConfig& config) : RecurrentCell(config, 1) {}

  // The workspace starts with H [B, H], then the new state s [B, H] (minimal) or the
  // gate inputs [seq, B, H] (fused).
  float* state(float* workspace, int) const override { return workspace; }
  int64_t scratch_floats() const override {
    return checked_mul({c_.plan == CellPlan::kFused ? c_.seq_length : 1, c_.batch, c_.hidden_size});
  }
  int64_t gemm_scratch_floats(int threads) const override {
    const int64_t input_rows = c_.plan == CellPlan::kMinimal ? c_.batch : checked_mul({c_.seq_length, c_.batch});
    return gate_matmul_scratch_floats(*c_.gemm, c_.input_size, c_.hidden_size, kGate, kGate, c_.weights_packed,
                                      input_rows, c_.batch, threads);
  }
  std::vector<GateSpan> input_blocks() const override { return {kGate}; }
  std::vector<GateSpan> recurrent_blocks() const override { return {kGate}; }

  int64_t gate_matmuls() const override { return 1; }
  int64_t elementwise_flops_per_unit() const override {
    return (c_.has_bias ? 2 : 0) + clip_flops() + (c_.relu ? relu_flops() : tanh_flops());
  }
  std::vector<std::string> sub_steps() const override {
    std::string pre = "Xt*W^T + Ht-1*R^T" + std::string(c_.has_bias ? " + Wb + Rb" : "");
    if (c_.clip) pre = "clip(" + pre + ")";
    if (c_.plan == CellPlan::kMinimal) return {"s = f(" + pre + ")", "H = s"};
    return {std::string("G = X*W^T") + (c_.has_bias ? " + Wb" : "") + " for every step (one GEMM, before step 0)",
            std::string("Gt = f(") + (c_.clip ? "clip(" : "") + "Gt + Ht-1*R^T" + (c_.has_bias ? " + Rb" : "") +
                (c_.clip ? ")" : "") + ") (one GEMM)",
            "H = Gt"};
  }
  std::vector<BufferSpan> buffers() const override {
    const int64_t bytes = checked_mul({4, c_.batch, c_.hidden_size});
    const int last = c_.plan == CellPlan::kMinimal ? 1 : 2;
    return {buffer("hidden_state", 0, bytes, 0, last),
            buffer(c_.plan == CellPlan::kMinimal ? "new_state" : "gate_inputs", bytes,
                   checked_mul({4, scratch_floats()}), 0, last)};
  }

 private:
  void step_minimal(const RunContext& ctx, const CellWeights& w, const float* x, int64_t t, ActiveRows active,
                    std::span<float> workspace) const override {
    float* s = workspace.data() + state_floats();
    input_matmul(ctx, *w.gates, kGate, x + step_offset(t, c_.input_size), step_stride(c_.input_size), c_.batch, w.bias,
                 s, c_.hidden_size, gemm_scratch(workspace));  // 0
    finish(ctx, w, active, s, c_.hidden_size, workspace);
  }
  void step_fused(const RunContext& ctx, const CellWeights& w, int64_t t, ActiveRows active,
                  std::span<float> workspace) const override {
    finish(ctx, w, active, workspace.data() + state_floats() + step_offset(t, c_.hidden_size),
           step_stride(c_.hidden_size), workspace);  // 1
  }
  // s (rows `ld` apart) += Ht-1*R^T + Rb; s = f(s); H = s on the active rows.
  void finish(const RunContext& ctx, const CellWeights& w, ActiveRows active, float* s, int64_t ld,
              std::span<float> workspace) const {
    const int64_t hidden = c_.hidden_size;
    float* h = workspace.data();
    recurrent_matmul(ctx, *w.gates, kGate, h, c_.batch, w.bias ? w.bias + hidden : nullptr, s, ld, true,
                     gemm_scratch(workspace));
    for (int64_t b = 0; b < c_.batch; ++b) c_.relu ? relu(s + b * ld, hidden) : tanh(s + b * ld, hidden);
    for (int64_t b = 0; b < c_.batch; ++b)  // last: Ht-1 was last read by the GEMM
      if (active(b)) std::copy_n(s + b * ld, hidden, h + b * hidden);
  }
};

const RecurrentKind kRnn = {
    "RNN",
    1,
    {"Tanh"},
    nullptr,
    nullptr,
    false,
    [](const CellConfig& c) -> std::unique_ptr<RecurrentCell> { return std::make_unique<RnnCell>(c); },
    "Relu"};

}  // namespace

std::unique_ptr<Op> make_rnn(const Node& node) {
  return make_recurrent_op(kRnn, node);
}

}  // namespace minfer
