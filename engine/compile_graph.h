// The graph a compile works on: the IR's nodes in execution order, each with the op
// built for it once, the type of every value, and the constants (initializers and the
// values folding computed). Inference, opset upgrades and constant folding happen as it
// is built; passes rewrite it through the methods below, which keep nodes and ops in step.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/memory_limit.h"
#include "ops/op.h"

namespace minfer {

class CompileGraph {
 public:
  // Walks the nodes in topological order: upgrades older opsets, builds each node's op,
  // infers its outputs' types and, when every input it reads is a constant, folds it
  // (runs its kernel; its outputs become constants). Tensors count against `budget`.
  // Throws ModelError naming the node.
  CompileGraph(Graph graph, MemoryBudget& budget);

  // The IR as it stands (nodes in execution order); the graph's initializers are the
  // constants.
  const Graph& graph() const { return graph_; }
  size_t size() const { return graph_.nodes.size(); }
  const Node& node(size_t i) const { return graph_.nodes[i]; }
  const Op& op(size_t i) const { return *ops_[i]; }
  std::shared_ptr<const Op> shared_op(size_t i) const { return ops_[i]; }

  const TensorType& type(const std::string& value) const;
  // The value's data when it is a constant, else nullptr.
  const Tensor* constant(const std::string& value) const;
  bool is_graph_output(const std::string& value) const;
  const std::map<std::string, TensorType>& types() const { return types_; }

  OpSignature signature(size_t i) const;
  // The node's cost (Op::cost on its signature); errors name the node.
  OpCost cost(size_t i) const;
  Cost total_cost() const;

  // Rewrites. Each keeps the op beside its node: set_attributes() builds the node's op
  // again (its attributes changed); the others keep it.
  void set_inputs(size_t i, std::vector<std::string> inputs);
  void set_outputs(size_t i, std::vector<std::string> outputs);
  void set_name(size_t i, std::string name);
  void set_attributes(size_t i, Attributes attrs);
  // The node becomes another op (a pass replaced a pattern with it); its op is built again.
  void set_op_type(size_t i, std::string op_type, Attributes attrs);
  // Infers node i's output types again (a pass changed its attributes or inputs' types)
  // and records them for its outputs' names.
  void retype_outputs(size_t i);
  // Infers every node's outputs again and throws OpError, naming the node, where one
  // differs from the type recorded for it: a rewrite that changed what a node computes
  // (its shape) without saying so, whose kernel would fill a buffer of another size.
  void check_types() const;
  // Puts `node` before node `at` (at == size(): last), its op built and its outputs'
  // types inferred; no other node may produce its outputs.
  void insert_node(size_t at, Node node);
  // A new constant (a folded weight); `name` must be new.
  void add_constant(const std::string& name, Tensor value);
  // `base`, or `base` with a numeric suffix, so it names no tensor yet.
  std::string unique_name(const std::string& base) const;
  // Drops the nodes marked true, keeping the others' order, and the constants no node
  // or graph output reads any more. One pass over the graph.
  void remove_nodes(const std::vector<bool>& removed);

  // The IR, for writing (engine_convert) or keeping beside the compiled model.
  Graph take_graph() && { return std::move(graph_); }

  // How many ops this graph built (the counting test: once per node per compile).
  int64_t ops_built() const { return ops_built_; }

 private:
  void add_node(Node node, MemoryBudget& budget);
  // The node upgraded from an older opset and added; an If becomes its branch's nodes.
  // `scope` renames the values a branch defines (inputs are read through it).
  void add_upgraded(Node node, const std::map<std::string, std::string>& scope, MemoryBudget& budget);
  void add_branch(const Node& node, const std::map<std::string, std::string>& outer, MemoryBudget& budget);
  static std::string in_scope(const std::map<std::string, std::string>& scope, const std::string& name);
  void check_tensor_sizes(int64_t limit) const;
  std::unique_ptr<Op> build_op(const Node& node);

  Graph graph_;
  std::vector<std::shared_ptr<const Op>> ops_;  // ops_[i] was built from graph_.nodes[i]
  std::map<std::string, TensorType> types_;
  // The empty outputs of nodes that compute nothing (add_node), now empty constants.
  std::set<std::string> empty_values_;
  int64_t ops_built_ = 0;
};

}  // namespace minfer
