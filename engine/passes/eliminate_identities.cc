#include "engine/passes/eliminate_identities.h"

#include <map>

#include "engine/passes/tensor_uses.h"

namespace minfer {
namespace {

// Follows renames to the name a tensor ends up with.
std::string resolve(const std::map<std::string, std::string>& alias, std::string name) {
  for (size_t hops = 0; hops <= alias.size(); ++hops) {
    auto it = alias.find(name);
    if (it == alias.end()) break;
    name = it->second;
  }
  return name;
}

}  // namespace

PassLog eliminate_identities(CompileGraph& g) {
  PassLog log{"eliminate_identities", {}};
  const TensorUses uses(g);
  std::map<std::string, std::string> alias;  // old tensor name -> the name it takes
  std::vector<bool> removed(g.size(), false);
  for (size_t i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    // Outputs besides output 0 (Dropout's mask) may go with the node when nothing reads them.
    bool others_read = false;
    for (size_t o = 1; o < n.outputs.size(); ++o)
      others_read =
          others_read || (!n.outputs[o].empty() && (uses.reads.count(n.outputs[o]) || g.is_graph_output(n.outputs[o])));
    if (!g.op(i).is_identity(g.signature(i)) || n.outputs.empty() || n.outputs[0].empty() || others_read ||
        n.inputs.empty() || n.inputs[0].empty())
      continue;
    const std::string in = resolve(alias, n.inputs[0]), out = n.outputs[0];
    if (!g.is_graph_output(out)) {
      alias[out] = in;  // readers of the identity's output read its input
    } else if (uses.producer.count(in) && !g.is_graph_output(in) && !g.constant(in)) {
      alias[in] = out;  // the producer writes the graph output directly
    } else {
      continue;
    }
    log.actions.push_back({"removed", {n.name}, "", "", g.cost(i), {}, n.op_type});
    removed[i] = true;
  }
  if (alias.empty()) return log;
  for (size_t i = 0; i < g.size(); ++i) {
    if (removed[i]) continue;
    std::vector<std::string> inputs = g.node(i).inputs, outputs = g.node(i).outputs;
    for (std::string& name : inputs) name = resolve(alias, name);
    for (std::string& name : outputs) name = resolve(alias, name);
    g.set_inputs(i, std::move(inputs));
    g.set_outputs(i, std::move(outputs));
  }
  g.remove_nodes(removed);
  return log;
}

}  // namespace minfer
