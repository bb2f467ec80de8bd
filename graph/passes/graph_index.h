// Producer and consumer lookups the passes share. A pass builds one index, keeps it
// current as it rewrites, and erases the nodes it removed once at the end: every pass is
// near-linear in the graph's size.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph.h"

namespace minfer {

struct GraphIndex {
  struct Uses {
    size_t count = 0;  // reads, one per input that names the tensor
    size_t first = 0;  // the node of the first read
  };
  std::unordered_map<std::string, size_t> producer;  // tensor -> node index
  std::unordered_map<std::string, Uses> readers;     // tensor -> its reads
  std::unordered_set<std::string> graph_outputs;

  explicit GraphIndex(const Graph& graph);

  bool is_graph_output(const std::string& tensor) const { return graph_outputs.count(tensor) > 0; }
  // The tensor has exactly one reader, once, and is not a graph output.
  bool feeds_only(const std::string& tensor, size_t node) const;
};

// The names of every tensor (graph inputs, initializers, node outputs), to name new ones.
class TensorNames {
 public:
  explicit TensorNames(const Graph& graph);
  // `base`, or `base` with a numeric suffix, so it names no tensor; taken from then on.
  std::string unique(const std::string& base);

 private:
  std::unordered_set<std::string> taken_;
};

// Removes the nodes marked in `removed` (one flag per node), keeping the others' order.
void erase_nodes(Graph& graph, const std::vector<bool>& removed);

// Removes initializers no node reads and no graph output names (after a rewrite).
void drop_unused_initializers(Graph& graph);

}  // namespace minfer
