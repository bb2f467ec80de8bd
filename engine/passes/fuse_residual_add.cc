#include "engine/passes/fuse_residual_add.h"

#include <optional>

#include "engine/passes/tensor_uses.h"
#include "ops/activation.h"

namespace minfer {
namespace {

// The Conv producing `tensor` that can take the other operand `residual` as its sum: a
// Conv with one output read by the Add alone, no activation and no residual yet, placed
// after whatever produces the residual.
std::optional<size_t> fusable_conv(const CompileGraph& g, const TensorUses& uses, const std::vector<bool>& removed,
                                   const std::string& tensor, const std::string& residual) {
  const std::optional<size_t> conv = uses.producer_of_type(g, tensor, "Conv");
  if (!conv || removed[*conv] || !uses.read_once(g, tensor)) return std::nullopt;
  const Node& cn = g.node(*conv);
  if (cn.attrs.has("fused_residual") || has_fused_activation(cn.attrs) || g.type(tensor).dtype != DType::kFloat32)
    return std::nullopt;
  const auto r = uses.producer.find(residual);
  if (r != uses.producer.end() && r->second > *conv) return std::nullopt;
  return conv;
}

}  // namespace

PassLog fuse_residual_add(CompileGraph& g) {
  PassLog log{"fuse_residual_add", {}};
  const TensorUses uses(g);
  std::vector<bool> removed(g.size(), false);
  for (size_t i = 0; i < g.size(); ++i) {
    const Node add = g.node(i);
    if (add.op_type != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    const TensorType& out = g.type(add.outputs[0]);
    if (g.type(add.inputs[0]) != out || g.type(add.inputs[1]) != out) continue;  // no broadcasting
    // The later of the two candidate Convs, so the other operand exists when it runs.
    std::optional<size_t> conv;
    int side = 0;
    for (int s = 0; s < 2; ++s) {
      const std::optional<size_t> c = fusable_conv(g, uses, removed, add.inputs[s], add.inputs[1 - s]);
      if (c && (!conv || *c > *conv)) {
        conv = c;
        side = s;
      }
    }
    if (!conv) continue;
    const Node cn = g.node(*conv);
    Cost before = g.cost(*conv);
    before += g.cost(i);
    Attributes attrs = cn.attrs;
    for (const auto& [name, value] : add.attrs.all()) attrs.set(name, value);  // the Add's fused activation
    attrs.set("fused_residual", int64_t{1});
    std::vector<std::string> inputs = cn.inputs;
    inputs.resize(3);  // an absent bias stays "" before the residual
    inputs.push_back(add.inputs[1 - side]);
    const std::string merged = cn.name + "+" + add.name;
    g.set_inputs(*conv, std::move(inputs));
    g.set_outputs(*conv, add.outputs);
    g.set_name(*conv, merged);
    g.set_attributes(*conv, std::move(attrs));
    removed[i] = true;
    log.actions.push_back({"fused", {cn.name, add.name}, merged, "", before, g.cost(*conv), add.op_type});
  }
  g.remove_nodes(removed);
  return log;
}

}  // namespace minfer
