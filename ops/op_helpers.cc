#include "ops/op_helpers.h"

#include <fmt/format.h>

#include <cmath>

namespace minfer {

const Shape& required_shape(std::span<const OpInput> in, size_t index, const char* what) {
  if (index >= in.size() || !in[index].present) throw OpError(fmt::format("missing input {} ({})", index, what));
  return in[index].shape();
}

void check_input_count(std::span<const OpInput> in, size_t min_count, size_t max_count) {
  if (in.size() < min_count || in.size() > max_count) {
    if (min_count == max_count) throw OpError(fmt::format("expects {} inputs, got {}", min_count, in.size()));
    throw OpError(fmt::format("expects {} to {} inputs, got {}", min_count, max_count, in.size()));
  }
  for (size_t i = 0; i < min_count; ++i)
    if (!in[i].present) throw OpError(fmt::format("input {} is required", i));
}

void require_float(std::span<const OpInput> in, size_t first) {
  for (size_t i = first; i < in.size(); ++i)
    if (in[i].present && in[i].dtype() != DType::kFloat32)
      throw UnsupportedError(fmt::format("input {} is {}; this op computes on float32", i, dtype_name(in[i].dtype())));
}

std::vector<int64_t> constant_ints(std::span<const OpInput> in, size_t index, const char* what) {
  required_shape(in, index, what);
  const Tensor* t = in[index].constant;
  if (!t) throw OpError(fmt::format("input {} ({}) must be a constant", index, what));
  if (t->dtype() == DType::kInt64) {
    const auto v = t->values<int64_t>();
    return {v.begin(), v.end()};
  }
  if (t->dtype() != DType::kFloat32)
    throw OpError(fmt::format("input {} ({}) must hold integers, got {}", index, what, dtype_name(t->dtype())));
  std::vector<int64_t> v;
  v.reserve(static_cast<size_t>(t->size()));
  for (float f : t->values<float>()) {
    if (!(std::fabs(f) < 9.0e15f) || f != std::trunc(f))
      throw OpError(fmt::format("input {} ({}) holds {}, not an integer", index, what, f));
    v.push_back(static_cast<int64_t>(f));
  }
  return v;
}

Cost data_movement(const OpTraits& traits, const OpSignature& sig) {
  Cost c;
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const OpInput& a = sig.inputs[i];
    if (!a.present || !traits.is_data_input(i)) continue;
    const int64_t n = num_elements(a.shape());
    c.bytes_read = checked_add({c.bytes_read, checked_mul({dtype_size(a.dtype()), n})});
    if (a.constant) c.params += n;
  }
  for (const OpOutput& o : sig.outputs)
    if (o.present)
      c.bytes_written =
          checked_add({c.bytes_written, checked_mul({dtype_size(o.type.dtype), num_elements(o.shape())})});
  return c;
}

OpCost op_cost(const Op& op, const OpSignature& sig, CostExpr macs, CostExpr flops) {
  OpCost c{data_movement(op.traits(), sig), std::move(macs), std::move(flops)};
  c.macs = c.macs_formula.value();
  c.flops = c.flops_formula.value();
  return c;
}

CostExpr plus_activation_flops(const CostExpr& flops, const Activation& act, const char* what, int64_t elements) {
  if (act.kind == ActivationKind::kNone) return flops;
  return flops + CostExpr::of("activation FLOPs/element", act.flops_per_element()) * CostExpr::of(what, elements);
}

CostExpr product_flops(const CostExpr& macs, const Activation& act, int64_t output_elements) {
  return plus_activation_flops(CostExpr(2) * macs, act, "output elements", output_elements);
}

Op::AffineFold fold_affine_into_weights(const OpSignature& sig, bool runs_activation, int64_t channels,
                                        const ChannelAffine& a, const std::function<int64_t(int64_t)>& channel_of,
                                        const std::function<double(const Tensor& bias, int64_t c)>& old_bias) {
  const Tensor* w = sig.inputs[1].constant;
  const bool has_bias = sig.inputs.size() > 2 && sig.inputs[2].present;
  if (!w) return {std::nullopt, "whose weights are not constants"};
  if (has_bias && !sig.inputs[2].constant) return {std::nullopt, "whose bias is not a constant"};
  if (runs_activation) return {std::nullopt, "which already runs an activation"};
  FoldedAffine f{Tensor(DType::kFloat32, w->shape()), Tensor(DType::kFloat32, {channels}), std::nullopt};
  const std::span<const float> wv = w->values<float>();
  std::span<float> w2 = f.weights.mutable_values<float>(), b2 = f.bias.mutable_values<float>();
  for (int64_t i = 0; i < w->size(); ++i) w2[i] = static_cast<float>(wv[i] * a.scale[channel_of(i)]);
  for (int64_t c = 0; c < channels; ++c) {
    const double b = has_bias ? old_bias(*sig.inputs[2].constant, c) : 0.0;
    b2[c] = static_cast<float>(b * a.scale[c] + a.shift[c]);
  }
  return {std::move(f), ""};
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw OpError(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return a;
}

}  // namespace minfer
