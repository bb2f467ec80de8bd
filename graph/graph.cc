#include "graph/graph.h"

#include <fmt/format.h>

namespace minfer {

const Node* Graph::find_node(const std::string& node_name) const {
  for (const Node& n : nodes)
    if (n.name == node_name) return &n;
  return nullptr;
}

std::string node_context(const Graph& graph, const Node& node) {
  return fmt::format("{}: node '{}' ({})", graph.source, node.name, node.op_type);
}

}  // namespace minfer
