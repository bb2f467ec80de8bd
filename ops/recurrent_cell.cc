#include "ops/recurrent_cell.h"

#include <fmt/format.h>

#include <algorithm>

#include "ops/activation.h"

namespace minfer {

std::optional<CellPlan> parse_cell_plan(const std::string& name) {
  if (name == "auto") return std::nullopt;
  if (name == "minimal") return CellPlan::kMinimal;
  if (name == "fused") return CellPlan::kFused;
  throw OpError(fmt::format("attribute 'plan' must be \"auto\", \"minimal\" or \"fused\", got \"{}\"", excerpt(name)));
}

const char* cell_plan_name(CellPlan plan) {
  return plan == CellPlan::kMinimal ? "minimal" : "fused";
}

namespace {

void clip_values(const std::optional<float>& clip, float* y, int64_t n) {
  if (!clip) return;
  const float bound = *clip;
  for (int64_t j = 0; j < n; ++j) y[j] = std::clamp(y[j], -bound, bound);
}

}  // namespace

void RecurrentCell::project_inputs(const RunContext& ctx, const CellWeights& w, const float* x,
                                   std::span<float> workspace) const {
  if (c_.plan != CellPlan::kFused) return;
  // X is [seq * B, D] rows in either layout; the gate inputs keep its row order.
  input_matmul(ctx, *w.gates, all_gates(), x, c_.input_size, c_.seq_length * c_.batch, w.bias,
               workspace.data() + state_floats(), gates_ * c_.hidden_size, gemm_scratch(workspace));
}

void RecurrentCell::sigmoid(float* y, int64_t n) const {
  clip_values(c_.clip, y, n);
  c_.activations->sigmoid(y, n);
}

void RecurrentCell::tanh(float* y, int64_t n) const {
  clip_values(c_.clip, y, n);
  c_.activations->tanh(y, n);
}

void RecurrentCell::relu(float* y, int64_t n) const {
  clip_values(c_.clip, y, n);
  Activation{ActivationKind::kRelu}.apply(y, n);
}

int64_t RecurrentCell::sigmoid_flops() {
  return Activation{ActivationKind::kSigmoid}.flops_per_element();
}

int64_t RecurrentCell::tanh_flops() {
  return Activation{ActivationKind::kTanh}.flops_per_element();
}

int64_t RecurrentCell::relu_flops() {
  return Activation{ActivationKind::kRelu}.flops_per_element();
}

}  // namespace minfer
