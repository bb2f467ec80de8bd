#include "engine/passes/fuse_self_gates.h"

#include <cmath>

#include "engine/passes/tensor_uses.h"
#include "ops/activation.h"

namespace minfer {
namespace {

// The activation x * gate(x) is, for the gates that have one.
std::optional<Activation> self_gated(const Activation& gate) {
  if (gate.kind == ActivationKind::kSigmoid) return Activation{ActivationKind::kSwish, 1.0f};
  // PyTorch's hardswish exported before opset 14; alpha is 1/6 to float precision.
  if (gate.kind == ActivationKind::kHardSigmoid && std::fabs(gate.alpha * 6.0f - 1.0f) <= 1e-6f && gate.beta == 0.5f)
    return Activation{ActivationKind::kHardSwish};
  return std::nullopt;
}

}  // namespace

PassLog fuse_self_gates(CompileGraph& g) {
  PassLog log{"fuse_self_gates", {}};
  const TensorUses uses(g);
  std::vector<bool> removed(g.size(), false);
  for (size_t i = 0; i < g.size(); ++i) {
    const Node mul = g.node(i);
    if (mul.op_type != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
    for (int side = 0; side < 2; ++side) {
      const std::string& gated = mul.inputs[side];
      const std::string& x = mul.inputs[1 - side];
      auto p = uses.producer.find(gated);
      if (p == uses.producer.end() || removed[p->second]) continue;
      const size_t gate = p->second;
      const Node gn = g.node(gate);
      if (!g.op(gate).traits().activation || gn.inputs.empty() || gn.inputs[0] != x || !uses.read_once(g, gated) ||
          g.type(x) != g.type(mul.outputs[0]))
        continue;
      const std::optional<Activation> a = g.op(gate).as_activation(g.signature(gate));
      const std::optional<Activation> fused = a ? self_gated(*a) : std::nullopt;
      if (!fused) continue;
      Cost before = g.cost(gate);
      before += g.cost(i);
      const std::string merged = gn.name + "+" + mul.name;
      // The gate's node takes the Mul's place: it reads x, which the Mul read too, and
      // comes before every reader of the Mul's output.
      g.set_op_type(gate, activation_name(*fused), activation_attributes(*fused));
      g.set_inputs(gate, {x});
      g.set_outputs(gate, mul.outputs);
      g.set_name(gate, merged);
      removed[i] = true;
      log.actions.push_back({"fused", {gn.name, mul.name}, merged, "", before, g.cost(gate), mul.op_type});
      break;
    }
  }
  g.remove_nodes(removed);
  return log;
}

}  // namespace minfer
