#include "graph/passes/eliminate_dead_nodes.h"

#include <queue>

#include "graph/passes/graph_index.h"

namespace minfer {

PassLog eliminate_dead_nodes(Graph& g) {
  PassLog log{"eliminate_dead_nodes", {}};
  GraphIndex index(g);  // its read counts go down as readers are removed
  auto dead = [&](size_t i) {
    for (const std::string& o : g.nodes[i].outputs) {
      if (o.empty()) continue;
      auto r = index.readers.find(o);
      if ((r != index.readers.end() && r->second.count > 0) || index.is_graph_output(o)) return false;
    }
    return true;
  };
  // Removing a node can make its producers dead in turn. The dead node listed last goes
  // first, so a dead chain is logged from its end back.
  std::priority_queue<size_t> pending;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (dead(i)) pending.push(i);
  std::vector<bool> removed(g.nodes.size(), false);
  while (!pending.empty()) {
    const size_t i = pending.top();
    pending.pop();
    if (removed[i]) continue;
    removed[i] = true;
    log.actions.push_back({"removed", {g.nodes[i].name}, "", "no node or graph output reads its outputs"});
    for (const std::string& in : g.nodes[i].inputs) {
      if (in.empty() || --index.readers.at(in).count > 0) continue;
      auto p = index.producer.find(in);
      if (p != index.producer.end() && !removed[p->second] && dead(p->second)) pending.push(p->second);
    }
  }
  erase_nodes(g, removed);
  drop_unused_initializers(g);
  return log;
}

}  // namespace minfer
