#include "engine/passes/fuse_channel_scale.h"

#include <optional>

#include "engine/passes/tensor_uses.h"
#include "ops/activation.h"

namespace minfer {
namespace {

// The factor operand of a Mul that scales the other one's channels: shaped [N, C, 1, 1]
// where the other and the product are [N, C, H, W], all float32. Returns its index.
std::optional<int> factor_side(const CompileGraph& g, const Node& mul) {
  if (mul.inputs.size() != 2 || mul.outputs.size() != 1) return std::nullopt;
  const TensorType& out = g.type(mul.outputs[0]);
  if (out.dtype != DType::kFloat32 || out.shape.size() != 4) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const TensorType& x = g.type(mul.inputs[1 - side]);
    const TensorType& s = g.type(mul.inputs[side]);
    if (x == out && s.dtype == DType::kFloat32 && s.shape == Shape{out.shape[0], out.shape[1], 1, 1}) return side;
  }
  return std::nullopt;
}

// The Conv reading the product alone, as its data input: 1x1, no factor yet.
std::optional<size_t> scalable_conv(const CompileGraph& g, const TensorUses& uses, const std::string& product) {
  const std::optional<size_t> conv = uses.only_reader_of_type(g, product, "Conv");
  if (!conv) return std::nullopt;
  const Node& cn = g.node(*conv);
  if (cn.inputs.size() < 2 || cn.inputs[0] != product || cn.inputs[1] == product || cn.attrs.has("fused_input_scale"))
    return std::nullopt;
  const Shape& w = g.type(cn.inputs[1]).shape;
  if (w.size() != 4 || w[2] != 1 || w[3] != 1) return std::nullopt;
  return conv;
}

}  // namespace

PassLog fuse_channel_scale(CompileGraph& g) {
  PassLog log{"fuse_channel_scale", {}};
  const TensorUses uses(g);
  std::vector<bool> removed(g.size(), false);
  for (size_t i = 0; i < g.size(); ++i) {
    const Node mul = g.node(i);
    if (mul.op_type != "Mul" || has_fused_activation(mul.attrs)) continue;
    const std::optional<int> side = factor_side(g, mul);
    if (!side) continue;
    const std::optional<size_t> conv = scalable_conv(g, uses, mul.outputs[0]);
    if (!conv) continue;
    const Node cn = g.node(*conv);
    Cost before = g.cost(*conv);
    before += g.cost(i);
    Attributes attrs = cn.attrs;
    attrs.set("fused_input_scale", int64_t{1});
    std::vector<std::string> inputs = cn.inputs;
    inputs[0] = mul.inputs[1 - *side];
    inputs.resize(4);  // an absent bias and residual stay "" before the factor
    inputs.push_back(mul.inputs[*side]);
    const std::string merged = mul.name + "+" + cn.name;
    g.set_inputs(*conv, std::move(inputs));
    g.set_name(*conv, merged);
    g.set_attributes(*conv, std::move(attrs));
    removed[i] = true;
    log.actions.push_back({"fused", {mul.name, cn.name}, merged, "", before, g.cost(*conv), mul.op_type});
  }
  g.remove_nodes(removed);
  return log;
}

}  // namespace minfer
