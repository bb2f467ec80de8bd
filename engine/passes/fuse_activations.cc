#include "engine/passes/fuse_activations.h"

#include "engine/passes/tensor_uses.h"

namespace minfer {

PassLog fuse_activations(CompileGraph& g) {
  PassLog log{"fuse", {}};
  TensorUses uses(g);
  std::vector<bool> removed(g.size(), false);
  for (size_t i = 0; i < g.size(); ++i) {
    if (!g.op(i).traits().activation) continue;
    const Node act = g.node(i);
    if (act.inputs.empty() || act.outputs.size() != 1) continue;
    auto p = uses.producer.find(act.inputs[0]);
    if (p == uses.producer.end()) continue;
    const size_t producer = p->second;
    const Node& pn = g.node(producer);
    if (!g.op(producer).traits().fuses_activation || has_fused_activation(pn.attrs) ||
        !uses.read_once(g, act.inputs[0]))
      continue;
    const std::optional<Activation> activation = g.op(i).as_activation(g.signature(i));
    if (!activation) {
      const Cost c = g.cost(i);
      log.actions.push_back({"kept", {act.name}, act.name, "its parameters are not constants", c, c, act.op_type});
      continue;
    }
    const Cost before = [&] {
      Cost c = g.cost(producer);
      c += g.cost(i);
      return c;
    }();
    Attributes attrs = pn.attrs;
    const Attributes fused = fused_activation_attributes(*activation);
    for (const auto& [name, value] : fused.all()) attrs.set(name, value);
    std::vector<std::string> outputs = pn.outputs;
    outputs[0] = act.outputs[0];
    const std::string merged = pn.name + "+" + act.name;
    const std::vector<std::string> nodes = {pn.name, act.name};
    g.set_outputs(producer, std::move(outputs));
    g.set_name(producer, merged);
    g.set_attributes(producer, std::move(attrs));
    uses.producer[act.outputs[0]] = producer;
    removed[i] = true;
    log.actions.push_back({"fused", nodes, merged, "", before, g.cost(producer), act.op_type});
  }
  g.remove_nodes(removed);
  return log;
}

}  // namespace minfer
