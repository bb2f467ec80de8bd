#include "ops/recurrent_cell.h"

#include <fmt/format.h>

#include <algorithm>

#include "ops/activation.h"

namespace minfer {

CellPlan parse_cell_plan(const std::string& name) {
  if (name == "minimal") return CellPlan::kMinimal;
  if (name == "fused") return CellPlan::kFused;
  throw OpError(fmt::format("attribute 'plan' must be \"minimal\" or \"fused\", got \"{}\"", excerpt(name)));
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

void RecurrentCell::sigmoid(float* y, int64_t n) const {
  clip_values(c_.clip, y, n);
  c_.activations->sigmoid(y, n);
}

void RecurrentCell::tanh(float* y, int64_t n) const {
  clip_values(c_.clip, y, n);
  c_.activations->tanh(y, n);
}

int64_t RecurrentCell::sigmoid_flops() {
  return Activation{ActivationKind::kSigmoid}.flops_per_element();
}

int64_t RecurrentCell::tanh_flops() {
  return Activation{ActivationKind::kTanh}.flops_per_element();
}

}  // namespace minfer
