#include "engine/passes/eliminate_dead_nodes.h"

#include <set>

namespace minfer {

PassLog eliminate_dead_nodes(CompileGraph& g) {
  PassLog log{"eliminate_dead_nodes", {}};
  // Nodes are in execution order: one sweep from the end sees every reader before its producer.
  std::set<std::string> read(g.graph().outputs.begin(), g.graph().outputs.end());
  std::vector<bool> removed(g.size(), false);
  for (size_t i = g.size(); i-- > 0;) {
    const Node& n = g.node(i);
    bool used = false;
    for (const std::string& o : n.outputs) used = used || (!o.empty() && read.count(o));
    if (used) {
      read.insert(n.inputs.begin(), n.inputs.end());
      continue;
    }
    removed[i] = true;
    log.actions.push_back(
        {"removed", {n.name}, "", "no node or graph output reads its outputs", g.cost(i), {}, n.op_type});
  }
  g.remove_nodes(removed);
  return log;
}

}  // namespace minfer
