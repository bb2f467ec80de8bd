// Who writes and who reads each tensor of a compile graph, built once per pass: the
// passes rewrite in one sweep, so an index built at the start stays right for what they ask.
#pragma once

#include <map>
#include <string>

#include "engine/compile_graph.h"

namespace minfer {

struct TensorUses {
  std::map<std::string, size_t> producer;  // tensor -> node index
  std::map<std::string, int> reads;        // tensor -> number of node inputs that name it

  explicit TensorUses(const CompileGraph& graph);

  // The tensor is read once, by one node, and is not a graph output: whatever produces
  // it may change how (fold, fuse) without anyone else noticing.
  bool read_once(const CompileGraph& graph, const std::string& tensor) const;
};

}  // namespace minfer
