// Producer and consumer lookups the passes share, rebuilt after each rewrite.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace minfer {

struct GraphIndex {
  std::map<std::string, size_t> producer;                // tensor -> node index
  std::map<std::string, std::vector<size_t>> consumers;  // tensor -> node indices (one per use)

  explicit GraphIndex(const Graph& graph);

  bool is_graph_output(const Graph& graph, const std::string& tensor) const;
  // The tensor has exactly one reader, once, and is not a graph output.
  bool feeds_only(const Graph& graph, const std::string& tensor, size_t node) const;
};

}  // namespace minfer

namespace minfer {

// Removes initializers no node reads and no graph output names (after a rewrite).
void drop_unused_initializers(Graph& graph);

// `base`, or `base` with a numeric suffix, so it names no existing tensor.
std::string unique_tensor_name(const Graph& graph, const std::string& base);

}  // namespace minfer
