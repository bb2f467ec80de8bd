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

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw OpError(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return a;
}

}  // namespace minfer
