#include "engine/passes/fuse_matmul_bias.h"

#include "engine/passes/tensor_uses.h"
#include "ops/activation.h"

namespace minfer {

PassLog fuse_matmul_bias(CompileGraph& g) {
  PassLog log{"fuse_matmul_bias", {}};
  const TensorUses uses(g);
  std::vector<bool> removed(g.size(), false);
  for (size_t i = 0; i < g.size(); ++i) {
    const Node add = g.node(i);
    if (add.op_type != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    for (int side = 0; side < 2; ++side) {
      const std::string &product = add.inputs[side], &bias = add.inputs[1 - side];
      const std::optional<size_t> mm = uses.producer_of_type(g, product, "MatMul");
      if (!mm || removed[*mm] || !uses.read_once(g, product) || !g.constant(bias)) continue;
      const Node mn = g.node(*mm);
      const TensorType& out = g.type(product);
      // The product keeps its shape (no broadcast by the Add), the bias is its last axis.
      if (mn.attrs.has("fused_bias") || has_fused_activation(mn.attrs) || out.dtype != DType::kFloat32 ||
          g.type(add.outputs[0]) != out || out.shape.empty() || g.type(bias).dtype != DType::kFloat32)
        continue;
      const Shape& bs = g.type(bias).shape;
      if (num_elements(bs) != out.shape.back() || (!bs.empty() && bs.back() != out.shape.back())) continue;
      Cost before = g.cost(*mm);
      before += g.cost(i);
      Attributes attrs = mn.attrs;
      attrs.set("fused_bias", int64_t{1});
      std::vector<std::string> inputs = mn.inputs;
      inputs.push_back(bias);
      const std::string merged = mn.name + "+" + add.name;
      g.set_inputs(*mm, std::move(inputs));
      g.set_outputs(*mm, add.outputs);
      g.set_name(*mm, merged);
      g.set_attributes(*mm, std::move(attrs));
      removed[i] = true;
      log.actions.push_back({"fused", {mn.name, add.name}, merged, "", before, g.cost(*mm), add.op_type});
      break;
    }
  }
  g.remove_nodes(removed);
  return log;
}

}  // namespace minfer
