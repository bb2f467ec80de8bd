// Structural validation and execution order: every tensor has exactly one source
// (graph input, initializer or one node), no node reads an undefined tensor, no cycles.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"

namespace minfer {

struct Topology {
  std::vector<size_t> order;                                       // node indices, producers first
  std::unordered_map<std::string, size_t> producer;                // tensor -> node index
  std::unordered_map<std::string, std::vector<size_t>> consumers;  // tensor -> node indices, each once
};

// Throws ModelError naming the file, the node and the tensor at fault. The order is
// stable: among ready nodes the one listed first in the file runs first.
Topology build_topology(const Graph& graph);

}  // namespace minfer
