#include "graph/passes/eliminate_identities.h"

#include "graph/passes/graph_index.h"

namespace minfer {
namespace {

bool is_identity(const Node& n) {
  return (n.op_type == "Identity" || n.op_type == "Dropout") && n.outputs.size() == 1 && !n.inputs.empty() &&
         !n.inputs[0].empty();
}

void rename_tensor(Graph& g, const std::string& from, const std::string& to) {
  for (Node& n : g.nodes) {
    for (std::string& i : n.inputs)
      if (i == from) i = to;
    for (std::string& o : n.outputs)
      if (o == from) o = to;
  }
}

}  // namespace

PassLog eliminate_identities(Graph& g) {
  PassLog log{"eliminate_identities", {}};
  for (size_t i = 0; i < g.nodes.size();) {
    const Node n = g.nodes[i];
    if (!is_identity(n)) {
      ++i;
      continue;
    }
    const GraphIndex index(g);
    const std::string& in = n.inputs[0];
    const std::string& out = n.outputs[0];
    const bool out_is_graph_output = index.is_graph_output(g, out);
    if (!out_is_graph_output) {
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      rename_tensor(g, out, in);  // readers of the identity's output read its input
    } else if (index.producer.count(in) && !index.is_graph_output(g, in)) {
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      rename_tensor(g, in, out);  // the producer writes the graph output directly
    } else {
      ++i;
      continue;
    }
    log.actions.push_back({"removed", {n.name}, "", ""});
  }
  return log;
}

}  // namespace minfer
