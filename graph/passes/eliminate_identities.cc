#include "graph/passes/eliminate_identities.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "graph/passes/graph_index.h"

namespace minfer {
namespace {

bool is_identity(const Node& n) {
  return (n.op_type == "Identity" || n.op_type == "Dropout") && n.outputs.size() == 1 && !n.outputs[0].empty() &&
         !n.inputs.empty() && !n.inputs[0].empty();
}

// Tensor renames, recorded as they happen and applied to every node once at the end:
// each name points to the one that replaced it.
class Renames {
 public:
  void add(const std::string& from, const std::string& to) { to_[from] = to; }

  // The name `name` has now, after every rename so far. Each lookup points the names it
  // passed straight at the result, so chains stay short.
  std::string current(const std::string& name) {
    std::string target = name;
    for (auto it = to_.find(target); it != to_.end(); it = to_.find(target)) target = it->second;
    for (std::string at = name; at != target;) at = std::exchange(to_.at(at), target);
    return target;
  }

 private:
  std::unordered_map<std::string, std::string> to_;
};

}  // namespace

PassLog eliminate_identities(Graph& g) {
  PassLog log{"eliminate_identities", {}};
  if (std::none_of(g.nodes.begin(), g.nodes.end(), is_identity)) return log;
  const std::unordered_set<std::string> graph_outputs(g.outputs.begin(), g.outputs.end());
  std::unordered_set<std::string> produced;  // tensors a node writes, by their current names
  produced.reserve(g.nodes.size());
  for (const Node& n : g.nodes)
    for (const std::string& o : n.outputs)
      if (!o.empty()) produced.insert(o);
  Renames renames;
  std::vector<bool> removed(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!is_identity(n)) continue;
    const std::string in = renames.current(n.inputs[0]);
    const std::string out = renames.current(n.outputs[0]);
    if (!graph_outputs.count(out)) {
      renames.add(out, in);  // readers of the identity's output read its input
      produced.erase(out);
    } else if (produced.count(in) && !graph_outputs.count(in)) {
      renames.add(in, out);  // the producer writes the graph output directly
      produced.erase(in);
    } else {
      continue;
    }
    removed[i] = true;
    log.actions.push_back({"removed", {n.name}, "", ""});
  }
  erase_nodes(g, removed);
  for (Node& n : g.nodes) {
    for (std::string& i : n.inputs)
      if (!i.empty()) i = renames.current(i);
    for (std::string& o : n.outputs)
      if (!o.empty()) o = renames.current(o);
  }
  return log;
}

}  // namespace minfer
