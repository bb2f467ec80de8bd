#include "graph/passes/graph_index.h"

#include <set>

namespace minfer {

GraphIndex::GraphIndex(const Graph& graph) : graph_outputs(graph.outputs.begin(), graph.outputs.end()) {
  producer.reserve(graph.nodes.size());
  readers.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& o : graph.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
    for (const std::string& in : graph.nodes[i].inputs)
      if (!in.empty()) {
        Uses& u = readers[in];
        if (u.count++ == 0) u.first = i;
      }
  }
}

bool GraphIndex::feeds_only(const std::string& tensor, size_t node) const {
  auto it = readers.find(tensor);
  return it != readers.end() && it->second.count == 1 && it->second.first == node && !is_graph_output(tensor);
}

TensorNames::TensorNames(const Graph& graph) {
  taken_.reserve(graph.inputs.size() + graph.initializers.size() + graph.nodes.size());
  for (const GraphInput& in : graph.inputs) taken_.insert(in.name);
  for (const auto& entry : graph.initializers) taken_.insert(entry.first);
  for (const Node& n : graph.nodes) taken_.insert(n.outputs.begin(), n.outputs.end());
}

std::string TensorNames::unique(const std::string& base) {
  std::string name = base;
  for (int i = 1; taken_.count(name); ++i) name = base + "_" + std::to_string(i);
  taken_.insert(name);
  return name;
}

void erase_nodes(Graph& graph, const std::vector<bool>& removed) {
  size_t kept = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (!removed[i]) {
      if (kept != i) graph.nodes[kept] = std::move(graph.nodes[i]);
      ++kept;
    }
  graph.nodes.resize(kept);
}

void drop_unused_initializers(Graph& graph) {
  if (graph.initializers.empty()) return;
  std::set<std::string> used;  // the initializers something reads
  auto use = [&](const std::string& name) {
    if (graph.initializers.count(name)) used.insert(name);
  };
  for (const std::string& o : graph.outputs) use(o);
  for (const Node& n : graph.nodes)
    for (const std::string& in : n.inputs) use(in);
  for (auto it = graph.initializers.begin(); it != graph.initializers.end();)
    it = used.count(it->first) ? std::next(it) : graph.initializers.erase(it);
}

}  // namespace minfer
