// Who writes and who reads each tensor of a compile graph, built once per pass: the
// passes rewrite in one sweep, so an index built at the start stays right for what they ask.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/compile_graph.h"

namespace minfer {

struct TensorUses {
  std::map<std::string, size_t> producer;              // tensor -> node index
  std::map<std::string, int> reads;                    // tensor -> number of node inputs that name it
  std::map<std::string, std::vector<size_t>> readers;  // tensor -> the nodes reading it, in order

  explicit TensorUses(const CompileGraph& graph);

  // The tensor is read once, by one node, and is not a graph output: whatever produces
  // it may change how (fold, fuse) without anyone else noticing.
  bool read_once(const CompileGraph& graph, const std::string& tensor) const;

  // The node producing `tensor` when it is a node of `op_type` with one output.
  std::optional<size_t> producer_of_type(const CompileGraph& graph, const std::string& tensor,
                                         const char* op_type) const;
  // The one node reading `tensor` when it is read_once and that node is of `op_type`.
  std::optional<size_t> only_reader_of_type(const CompileGraph& graph, const std::string& tensor,
                                            const char* op_type) const;
};

// The operand of a two-input node that is not `one` (either order), or nullptr.
const std::string* other_input(const Node& node, const std::string& one);

// The value of a one-element float32 constant, for matching patterns (an epsilon, a 2).
std::optional<float> scalar_constant(const CompileGraph& graph, const std::string& tensor);

}  // namespace minfer
