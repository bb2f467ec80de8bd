#include "graph/passes/eliminate_dead_nodes.h"

#include "graph/passes/graph_index.h"

namespace minfer {

PassLog eliminate_dead_nodes(Graph& g) {
  PassLog log{"eliminate_dead_nodes", {}};
  // Removing a node can make its producers dead in turn: repeat until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    const GraphIndex index(g);
    for (size_t i = g.nodes.size(); i-- > 0;) {
      bool used = false;
      for (const std::string& o : g.nodes[i].outputs)
        used = used || index.consumers.count(o) || index.is_graph_output(g, o);
      if (used) continue;
      log.actions.push_back({"removed", {g.nodes[i].name}, "", "no node or graph output reads its outputs"});
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      changed = true;
      break;
    }
  }
  drop_unused_initializers(g);
  return log;
}

}  // namespace minfer
