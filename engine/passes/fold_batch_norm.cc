#include "engine/passes/fold_batch_norm.h"

#include <fmt/format.h>

#include "engine/passes/tensor_uses.h"

namespace minfer {

PassLog fold_batch_norm(CompileGraph& g) {
  PassLog log{"fold_bn", {}};
  TensorUses uses(g);
  std::vector<bool> removed(g.size(), false);
  // A producer's "folded" action, which a second affine folding into it (BN after BN) extends.
  std::vector<int> action_of(g.size(), -1);
  for (size_t i = 0; i < g.size(); ++i) {
    if (!g.op(i).traits().channel_affine) continue;
    const Node bn = g.node(i);
    const Cost bn_cost = g.cost(i);
    auto keep = [&](std::string reason) {
      log.actions.push_back({"kept", {bn.name}, bn.name, reason, bn_cost, bn_cost, bn.op_type});
    };
    auto p = uses.producer.find(bn.inputs.empty() ? "" : bn.inputs[0]);
    if (p == uses.producer.end()) {
      keep("its input is not produced by a node");
      continue;
    }
    const size_t producer = p->second;
    const Node& pn = g.node(producer);
    if (g.is_graph_output(bn.inputs[0])) {
      keep(fmt::format("the output of '{}' is a graph output", pn.name));
      continue;
    }
    if (!uses.read_once(g, bn.inputs[0])) {
      keep(fmt::format("the output of '{}' is also read elsewhere", pn.name));
      continue;
    }
    const std::optional<ChannelAffine> affine = g.op(i).channel_affine(g.signature(i));
    if (!affine) {
      keep("its parameters are not constants");
      continue;
    }
    Op::AffineFold fold = with_node_context(
        g.graph(), pn, [&] { return g.op(producer).fold_channel_affine(g.signature(producer), *affine); });
    if (!fold.folded) {
      keep(fmt::format("it follows '{}' ({}), {}", pn.name, pn.op_type, fold.blocker));
      continue;
    }
    const Cost producer_cost = g.cost(producer);
    const std::string w = g.unique_name(pn.name + ".W_folded"), b = g.unique_name(pn.name + ".B_folded");
    g.add_constant(w, std::move(fold.folded->weights));
    g.add_constant(b, std::move(fold.folded->bias));
    std::vector<std::string> inputs = pn.inputs, outputs = pn.outputs;
    inputs.resize(std::max<size_t>(inputs.size(), 3));
    inputs[1] = w;
    inputs[2] = b;
    outputs[0] = bn.outputs[0];
    const std::string merged = pn.name + "+" + bn.name;
    const std::vector<std::string> nodes = {pn.name, bn.name};
    g.set_inputs(producer, std::move(inputs));
    g.set_outputs(producer, std::move(outputs));
    g.set_name(producer, merged);
    if (fold.folded->attributes) g.set_attributes(producer, std::move(*fold.folded->attributes));
    uses.producer[bn.outputs[0]] = producer;
    removed[i] = true;
    if (action_of[producer] >= 0) {
      PassAction& a = log.actions[static_cast<size_t>(action_of[producer])];
      a.nodes.push_back(bn.name);
      a.result = merged;
      a.before += bn_cost;
      a.after = g.cost(producer);
      continue;
    }
    action_of[producer] = static_cast<int>(log.actions.size());
    Cost before = producer_cost;
    before += bn_cost;
    log.actions.push_back({"folded", nodes, merged, "", before, g.cost(producer), bn.op_type});
  }
  g.remove_nodes(removed);
  return log;
}

}  // namespace minfer
