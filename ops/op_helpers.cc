// Helpers shared by op implementations: input checks and the data-movement cost.
#include <cmath>

#include <fmt/format.h>

#include "ops/op.h"

namespace minfer {

const Shape& required_shape(const ArgInfos& in, size_t index, const char* what) {
  if (index >= in.size() || !in[index].present) throw OpError(fmt::format("missing input {} ({})", index, what));
  return in[index].shape;
}

void check_input_count(const ArgInfos& in, size_t min_count, size_t max_count) {
  if (in.size() < min_count || in.size() > max_count) {
    if (min_count == max_count) throw OpError(fmt::format("expects {} inputs, got {}", min_count, in.size()));
    throw OpError(fmt::format("expects {} to {} inputs, got {}", min_count, max_count, in.size()));
  }
  for (size_t i = 0; i < min_count; ++i)
    if (!in[i].present) throw OpError(fmt::format("input {} is required", i));
}

std::vector<int64_t> constant_ints(const ArgInfos& in, size_t index, const char* what) {
  required_shape(in, index, what);
  const Tensor* t = in[index].constant;
  if (!t) throw OpError(fmt::format("input {} ({}) must be a constant", index, what));
  std::vector<int64_t> v;
  v.reserve(t->data.size());
  for (float f : t->data) {
    if (!(std::fabs(f) < 9.0e15f) || f != std::trunc(f))
      throw OpError(fmt::format("input {} ({}) holds {}, not an integer", index, what, f));
    v.push_back(static_cast<int64_t>(f));
  }
  return v;
}

Cost data_movement(const ArgInfos& in, const std::vector<Shape>& out) {
  Cost c;
  for (const ArgInfo& a : in) {
    if (!a.present) continue;
    int64_t n = num_elements(a.shape);
    c.bytes_read += 4 * n;
    if (a.constant) c.params += n;
  }
  for (const Shape& s : out) c.bytes_written += 4 * num_elements(s);
  return c;
}

}  // namespace minfer
