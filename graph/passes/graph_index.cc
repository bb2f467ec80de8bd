#include "graph/passes/graph_index.h"

#include <algorithm>
#include <set>

namespace minfer {

GraphIndex::GraphIndex(const Graph& graph) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& o : graph.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
    for (const std::string& in : graph.nodes[i].inputs)
      if (!in.empty()) consumers[in].push_back(i);
  }
}

bool GraphIndex::is_graph_output(const Graph& graph, const std::string& tensor) const {
  return std::find(graph.outputs.begin(), graph.outputs.end(), tensor) != graph.outputs.end();
}

bool GraphIndex::feeds_only(const Graph& graph, const std::string& tensor, size_t node) const {
  auto it = consumers.find(tensor);
  return it != consumers.end() && it->second.size() == 1 && it->second[0] == node && !is_graph_output(graph, tensor);
}

}  // namespace minfer

namespace minfer {

void drop_unused_initializers(Graph& graph) {
  std::set<std::string> used(graph.outputs.begin(), graph.outputs.end());
  for (const Node& n : graph.nodes) used.insert(n.inputs.begin(), n.inputs.end());
  for (auto it = graph.initializers.begin(); it != graph.initializers.end();)
    it = used.count(it->first) ? std::next(it) : graph.initializers.erase(it);
}

std::string unique_tensor_name(const Graph& graph, const std::string& base) {
  auto taken = [&](const std::string& name) {
    if (graph.initializers.count(name)) return true;
    for (const GraphInput& in : graph.inputs)
      if (in.name == name) return true;
    for (const Node& n : graph.nodes)
      for (const std::string& o : n.outputs)
        if (o == name) return true;
    return false;
  };
  std::string name = base;
  for (int i = 1; taken(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

}  // namespace minfer
