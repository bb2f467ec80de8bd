#include "engine/passes/pool_before_pointwise.h"

#include <algorithm>

#include "engine/passes/tensor_uses.h"
#include "graph/shape.h"
#include "ops/activation.h"

namespace minfer {
namespace {

bool all_equal(const std::vector<int64_t>& v, int64_t value) {
  return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == value; });
}

// A Conv whose output per pixel is an affine map of its input at that pixel alone: a 1x1
// window at stride 1, no padding, and no activation, residual or input scale fused in.
bool per_pixel_affine(const CompileGraph& g, const Node& conv) {
  if (conv.inputs.size() < 2 || conv.inputs.size() > 3 || conv.outputs.size() != 1) return false;
  if (has_fused_activation(conv.attrs) || conv.attrs.has("fused_residual") || conv.attrs.has("fused_input_scale"))
    return false;
  const Tensor* w = g.constant(conv.inputs[1]);
  if (!w || w->shape().size() != 4 || w->shape()[2] != 1 || w->shape()[3] != 1) return false;
  const std::string auto_pad = conv.attrs.get_string("auto_pad", "NOTSET");
  return (auto_pad == "NOTSET" || auto_pad == "VALID") && all_equal(conv.attrs.get_ints("pads", {}), 0) &&
         all_equal(conv.attrs.get_ints("strides", {}), 1);
}

// An AveragePool whose every output is the plain mean of the inputs in its window: no
// padding (so no divisor counts a padded zero) and no ceil mode (no window past the edge).
bool plain_mean(const Node& pool) {
  const std::string auto_pad = pool.attrs.get_string("auto_pad", "NOTSET");
  return pool.outputs.size() == 1 && (auto_pad == "NOTSET" || auto_pad == "VALID") &&
         all_equal(pool.attrs.get_ints("pads", {}), 0) && pool.attrs.get_int("ceil_mode", 0) == 0;
}

}  // namespace

PassLog pool_before_pointwise(CompileGraph& g) {
  PassLog log{"pool_before_pointwise", {}};
  const TensorUses uses(g);
  for (size_t i = 0; i < g.size(); ++i) {
    const Node conv = g.node(i);
    if (conv.op_type != "Conv" || !per_pixel_affine(g, conv)) continue;
    const std::optional<size_t> r = uses.only_reader_of_type(g, conv.outputs[0], "AveragePool");
    if (!r || !plain_mean(g.node(*r))) continue;
    const Node pool = g.node(*r);
    const Shape& x = g.type(conv.inputs[0]).shape;
    const Shape& y = g.type(pool.outputs[0]).shape;
    if (x.size() != 4 || y.size() != 4 || y[2] * y[3] >= x[2] * x[3]) continue;
    Cost before = g.cost(i);
    before += g.cost(*r);
    // Node i averages the Conv's input; node r, the Conv, reads that and writes the
    // pool's output. Each node keeps its name with its op.
    const std::string pooled = g.unique_name(conv.inputs[0] + "@" + pool.name);
    g.set_inputs(i, {conv.inputs[0]});
    g.set_outputs(i, {pooled});
    g.set_op_type(i, "AveragePool", pool.attrs);
    g.set_name(i, pool.name);
    g.retype_outputs(i);
    std::vector<std::string> inputs = conv.inputs;
    inputs[0] = pooled;
    g.set_inputs(*r, std::move(inputs));
    g.set_op_type(*r, "Conv", conv.attrs);
    g.set_name(*r, conv.name);
    g.retype_outputs(*r);
    Cost after = g.cost(i);
    after += g.cost(*r);
    log.actions.push_back({"swapped", {conv.name, pool.name}, conv.name, "", before, after, "Conv"});
  }
  return log;
}

}  // namespace minfer
