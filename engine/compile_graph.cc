#include "engine/compile_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "engine/constant_folder.h"
#include "engine/onnx_opset_upgrade.h"
#include "graph/topology.h"

namespace minfer {

namespace {

// The problems a refused model has, each once with the first node it was found at and
// how many nodes have it.
class UnsupportedNodes {
 public:
  bool empty() const { return problems_.empty(); }

  // `message` is "<context>: <cause>" (an UnsupportedModelError about the node).
  void add(const std::string& context, const std::string& op_type, const std::string& message) {
    const std::string prefix = escape_controls(context) + ": ";
    const std::string cause = message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
    ++nodes_;
    for (Problem& p : problems_)
      if (p.op_type == op_type && p.cause == cause) {
        ++p.count;
        return;
      }
    problems_.push_back({op_type, cause, message, 1});
  }

  // One line per problem, then, when there are several, a line that counts them.
  void throw_if_any(const std::string& source) const {
    if (problems_.empty()) return;
    std::vector<std::string> lines;
    for (const Problem& p : problems_)
      lines.push_back(p.count == 1 ? p.first_message
                                   : fmt::format("{} (and {} more {} nodes)", p.first_message, p.count - 1, p.op_type));
    if (problems_.size() > 1)
      lines.push_back(
          fmt::format("{}: {} unsupported ops or attributes in {} nodes", source, problems_.size(), nodes_));
    throw UnsupportedModelError(lines);
  }

 private:
  struct Problem {
    std::string op_type, cause, first_message;
    int64_t count;
  };
  std::vector<Problem> problems_;
  int64_t nodes_ = 0;
};

}  // namespace

CompileGraph::CompileGraph(Graph graph, MemoryBudget& budget) {
  const Topology topology = build_topology(graph);
  std::vector<Node> nodes = std::move(graph.nodes);
  graph_ = std::move(graph);
  graph_.nodes.clear();
  for (const GraphInput& in : graph_.inputs) types_[in.name] = {in.dtype, in.shape};
  for (const auto& [name, tensor] : graph_.initializers) types_[name] = tensor.type();
  UnsupportedNodes unsupported;
  for (size_t index : topology.order) {
    Node& node = nodes[index];
    // After a node the engine cannot run, the nodes that read its outputs cannot be
    // inferred; their op types and attributes are still checked, so that the refusal
    // names every problem at once.
    if (std::any_of(node.inputs.begin(), node.inputs.end(),
                    [&](const std::string& in) { return !in.empty() && !types_.count(in); }) &&
        !unsupported.empty()) {
      try {
        // An older opset's node is checked only by its op type: its attributes are
        // those of the upgrade's input.
        with_node_context(graph_, node, [&] {
          if ((graph_.opset >= 13 || !is_known_op(node.op_type)) && node.op_type != "If") create_op(node);
        });
      } catch (const UnsupportedModelError& e) {
        unsupported.add(node_context(graph_, node), node.op_type, e.what());
      }
      continue;
    }
    const std::string context = node_context(graph_, node), op_type = node.op_type;  // node is moved from below
    try {
      add_upgraded(std::move(node), {}, budget);
    } catch (const UnsupportedModelError& e) {
      unsupported.add(context, op_type, e.what());
    }
  }
  unsupported.throw_if_any(graph_.source);
  graph_.branches.clear();  // the Ifs ran theirs
  graph_.opset = 13;
  check_tensor_sizes(budget.limit());
  // Constants only folding read are gone with the nodes that read them.
  remove_nodes(std::vector<bool>(graph_.nodes.size(), false));
}

void CompileGraph::add_upgraded(Node node, const std::map<std::string, std::string>& scope, MemoryBudget& budget) {
  if (node.op_type == "If" && node.attrs.has("then_branch")) return add_branch(node, scope, budget);
  for (std::string& in : node.inputs) in = in_scope(scope, in);
  if (graph_.opset >= kOpsetWithoutUpgrades) return add_node(std::move(node), budget);
  UpgradedNode up = with_node_context(graph_, node, [&] {
    return upgrade_to_opset13(node, graph_.opset, [&](const std::string& name) { return type(name).shape; });
  });
  for (auto& [name, value] : up.constants) add_constant(name, std::move(value));
  for (Node& n : up.nodes) add_node(std::move(n), budget);
}

// An If runs the branch its condition picks, which must be known by now (a constant, or
// folded from shapes): the branch's nodes and constants join the graph under names
// prefixed with the If's (values of the scopes around it keep theirs), and Identity nodes
// give its outputs the If's names. A condition computed at run time is refused.
void CompileGraph::add_branch(const Node& node, const std::map<std::string, std::string>& outer, MemoryBudget& budget) {
  const Graph* branch = with_node_context(graph_, node, [&] {
    const Tensor* cond = constant(in_scope(outer, node.inputs.at(0)));
    if (!cond)
      throw UnsupportedError(
          "its condition is computed at run time; an If runs only when its condition is known as the model "
          "compiles (a constant, or computed from shapes)");
    if (cond->size() != 1) throw OpError(fmt::format("the condition has {} values, not one", cond->size()));
    const int64_t index = node.attrs.get_int(cond->number(0) != 0 ? "then_branch" : "else_branch", -1);
    if (index < 0 || index >= static_cast<int64_t>(graph_.branches.size()))
      throw OpError(fmt::format("branch {} does not exist", index));
    const Graph& b = graph_.branches[static_cast<size_t>(index)];
    if (b.outputs.size() != node.outputs.size())
      throw OpError(fmt::format("the branch has {} outputs, the If {}", b.outputs.size(), node.outputs.size()));
    return &b;
  });
  const std::string prefix = node.name + "/";
  std::map<std::string, std::string> scope = outer;
  for (const auto& [name, value] : branch->initializers) {
    scope[name] = unique_name(prefix + name);
    add_constant(scope[name], value);
  }
  for (Node inner : branch->nodes) {  // a copy: add_upgraded moves it
    inner.name = prefix + inner.name;
    for (std::string& out : inner.outputs)
      if (!out.empty()) out = scope[out] = unique_name(prefix + out);
    if (inner.op_type == "If" && inner.attrs.has("then_branch")) {
      add_branch(inner, scope, budget);  // its inputs and branches read through `scope`
      continue;
    }
    add_upgraded(std::move(inner), scope, budget);
  }
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (!node.outputs[i].empty())
      add_node({fmt::format("{}output_{}", prefix, i),
                "Identity",
                {in_scope(scope, branch->outputs[i])},
                {node.outputs[i]},
                {}},
               budget);
}

std::string CompileGraph::in_scope(const std::map<std::string, std::string>& scope, const std::string& name) {
  const auto it = scope.find(name);
  return it == scope.end() ? name : it->second;
}

namespace {

void check_output_size(const MemoryBudget& budget, const std::string& name, const TensorType& t) {
  budget.check(tensor_bytes(num_elements(t.shape), dtype_size(t.dtype)),
               fmt::format("output '{}' of shape {}", name, shape_str(t.shape)));
}

}  // namespace

// Each tensor on its own within the limit (the plan's total is checked later). After
// inference: an op that cannot size its output (a product past 64 bits) says so first,
// which is more precise than an input or output being too large; before it no tensor
// but a folded constant (under the budget as it is made) is allocated.
void CompileGraph::check_tensor_sizes(int64_t limit) const {
  const MemoryBudget budget(limit);
  for (const GraphInput& in : graph_.inputs) {
    try {
      budget.check(tensor_bytes(num_elements(in.shape), dtype_size(in.dtype)),
                   fmt::format("input '{}' of shape {}", in.name, shape_str(in.shape)));
    } catch (const OpError& e) {
      throw ModelError(fmt::format("{}: {}", graph_.source, e.what()));
    }
  }
  for (const Node& node : graph_.nodes)
    with_node_context(graph_, node, [&] {
      for (const std::string& name : node.outputs)
        if (!name.empty()) check_output_size(budget, name, types_.at(name));
    });
}

std::unique_ptr<Op> CompileGraph::build_op(const Node& node) {
  ++ops_built_;
  return create_op(node);
}

void CompileGraph::add_node(Node node, MemoryBudget& budget) {
  with_node_context(graph_, node, [&] {
    // An empty tensor joins nothing: a Concat leaves it out (PyTorch exports x.roll(1, d)
    // on an axis of size 1 as the Concat of a whole slice and an empty one).
    if (node.op_type == "Concat") {
      std::vector<std::string> kept;
      for (const std::string& name : node.inputs)
        if (!empty_values_.count(name)) kept.push_back(name);
      if (!kept.empty()) node.inputs = std::move(kept);
    }
    std::unique_ptr<Op> op = build_op(node);
    const OpTraits traits = op->traits();
    OpSignature sig;
    for (const std::string& name : node.inputs) {
      if (name.empty()) {
        sig.inputs.push_back({{}, nullptr, false});
        continue;
      }
      sig.inputs.push_back({type(name), constant(name), true});
    }
    const std::vector<TensorType> out = op->infer(sig.inputs);
    if (node.outputs.size() > out.size())
      throw OpError(fmt::format("has {} outputs, the op produces {}", node.outputs.size(), out.size()));
    // Trailing outputs may be left off, but not all of them (costs read output 0).
    if (node.outputs.empty() && !out.empty() && !(traits.optional_outputs & 1u))
      throw OpError("output 0 is required and cannot be omitted");
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i].empty()) {
        if (!(traits.optional_outputs >> i & 1u))
          throw OpError(fmt::format("output {} is required and cannot be omitted", i));
        sig.outputs.push_back({out[i], false});
        continue;
      }
      sig.outputs.push_back({out[i], true});
      types_[node.outputs[i]] = out[i];
    }
    bool known = !node.outputs.empty();
    for (size_t i = 0; i < sig.inputs.size(); ++i)
      known = known && (!sig.inputs[i].present || sig.inputs[i].constant || (traits.shape_only_inputs >> i & 1u));
    if (known) {
      for (size_t i = 0; i < node.outputs.size(); ++i)
        if (!node.outputs[i].empty()) check_output_size(MemoryBudget(budget.limit()), node.outputs[i], out[i]);
      std::vector<Tensor> values = fold_constant_node(*op, sig, budget);
      for (size_t i = 0; i < node.outputs.size(); ++i)
        if (!node.outputs[i].empty()) graph_.initializers[node.outputs[i]] = std::move(values[i]);
      return;
    }
    // Shape computations folded above may meet empty tensors; kernels never do. A node
    // whose every output is empty computes nothing: its outputs are empty constants, which
    // a Concat leaves out (above); any other reader is refused here in turn.
    const auto empty = [&](size_t i) { return num_elements(sig.outputs[i].shape()) == 0; };
    bool all_empty = !node.outputs.empty();
    for (size_t i = 0; i < node.outputs.size(); ++i) all_empty = all_empty && (node.outputs[i].empty() || empty(i));
    if (all_empty) {
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (node.outputs[i].empty()) continue;
        graph_.initializers[node.outputs[i]] = Tensor(out[i].dtype, out[i].shape);
        empty_values_.insert(node.outputs[i]);
      }
      return;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (empty(i))
        throw UnsupportedError(fmt::format("output '{}' would have shape {}; empty tensors are not supported",
                                           node.outputs[i], shape_str(sig.outputs[i].shape())));
    for (size_t i = 0; i < sig.inputs.size(); ++i)
      if (empty_values_.count(node.inputs[i]) && !(traits.shape_only_inputs >> i & 1u))
        throw UnsupportedError(
            fmt::format("input '{}' is empty (shape {}); empty tensors are supported only as "
                        "Concat inputs",
                        node.inputs[i], shape_str(sig.inputs[i].shape())));
    ops_.push_back(std::move(op));
    graph_.nodes.push_back(std::move(node));
  });
}

const TensorType& CompileGraph::type(const std::string& value) const {
  auto it = types_.find(value);
  if (it == types_.end()) throw OpError(fmt::format("tensor '{}' is not defined", value));
  return it->second;
}

const Tensor* CompileGraph::constant(const std::string& value) const {
  auto it = graph_.initializers.find(value);
  return it == graph_.initializers.end() ? nullptr : &it->second;
}

bool CompileGraph::is_graph_output(const std::string& value) const {
  return std::find(graph_.outputs.begin(), graph_.outputs.end(), value) != graph_.outputs.end();
}

OpSignature CompileGraph::signature(size_t i) const {
  const Node& node = graph_.nodes[i];
  OpSignature sig;
  for (const std::string& name : node.inputs) {
    if (name.empty())
      sig.inputs.push_back({{}, nullptr, false});
    else
      sig.inputs.push_back({type(name), constant(name), true});
  }
  // Output types as inference recorded them (an omitted output has none).
  for (const std::string& name : node.outputs)
    sig.outputs.push_back({name.empty() ? TensorType{} : type(name), !name.empty()});
  return sig;
}

OpCost CompileGraph::cost(size_t i) const {
  return with_node_context(graph_, graph_.nodes[i], [&] { return ops_[i]->cost(signature(i)); });
}

Cost CompileGraph::total_cost() const {
  Cost total;
  for (size_t i = 0; i < size(); ++i) total += cost(i);
  return total;
}

void CompileGraph::set_inputs(size_t i, std::vector<std::string> inputs) {
  graph_.nodes[i].inputs = std::move(inputs);
}

void CompileGraph::set_outputs(size_t i, std::vector<std::string> outputs) {
  const Node& node = graph_.nodes[i];
  for (size_t o = 0; o < outputs.size() && o < node.outputs.size(); ++o)
    if (!outputs[o].empty() && !node.outputs[o].empty()) types_[outputs[o]] = types_.at(node.outputs[o]);
  graph_.nodes[i].outputs = std::move(outputs);
}

void CompileGraph::set_name(size_t i, std::string name) {
  graph_.nodes[i].name = std::move(name);
}

void CompileGraph::set_attributes(size_t i, Attributes attrs) {
  Node& node = graph_.nodes[i];
  node.attrs = std::move(attrs);
  ops_[i] = with_node_context(graph_, node, [&] { return build_op(node); });
}

void CompileGraph::set_op_type(size_t i, std::string op_type, Attributes attrs) {
  graph_.nodes[i].op_type = std::move(op_type);
  set_attributes(i, std::move(attrs));
}

void CompileGraph::retype_outputs(size_t i) {
  const Node& node = graph_.nodes[i];
  with_node_context(graph_, node, [&] {
    std::vector<OpInput> inputs;
    for (const std::string& name : node.inputs)
      inputs.push_back(name.empty() ? OpInput{{}, nullptr, false} : OpInput{type(name), constant(name), true});
    const std::vector<TensorType> out = ops_[i]->infer(inputs);
    for (size_t o = 0; o < node.outputs.size() && o < out.size(); ++o)
      if (!node.outputs[o].empty()) types_[node.outputs[o]] = out[o];
  });
}

void CompileGraph::check_types() const {
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& node = graph_.nodes[i];
    with_node_context(graph_, node, [&] {
      const std::vector<TensorType> out = ops_[i]->infer(signature(i).inputs);
      for (size_t o = 0; o < node.outputs.size() && o < out.size(); ++o) {
        if (node.outputs[o].empty()) continue;
        const TensorType& recorded = type(node.outputs[o]);
        if (out[o] != recorded)
          throw OpError(fmt::format("internal error: output '{}' was recorded as {} but the rewritten node makes {}",
                                    node.outputs[o], type_str(recorded), type_str(out[o])));
      }
    });
  }
}

void CompileGraph::insert_node(size_t at, Node node) {
  with_node_context(graph_, node, [&] {
    for (const Node& other : graph_.nodes)
      for (const std::string& name : node.outputs)
        if (!name.empty() && std::find(other.outputs.begin(), other.outputs.end(), name) != other.outputs.end())
          throw OpError(fmt::format("tensor '{}' is defined twice", name));
  });
  graph_.nodes.insert(graph_.nodes.begin() + static_cast<std::ptrdiff_t>(at), std::move(node));
  ops_.insert(ops_.begin() + static_cast<std::ptrdiff_t>(at),
              with_node_context(graph_, graph_.nodes[at], [&] { return build_op(graph_.nodes[at]); }));
  retype_outputs(at);
}

void CompileGraph::add_constant(const std::string& name, Tensor value) {
  if (types_.count(name)) throw OpError(fmt::format("tensor '{}' is defined twice", name));
  types_[name] = value.type();
  graph_.initializers.emplace(name, std::move(value));
}

std::string CompileGraph::unique_name(const std::string& base) const {
  std::string name = base;
  for (int i = 1; types_.count(name); ++i) name = fmt::format("{}_{}", base, i);
  return name;
}

void CompileGraph::remove_nodes(const std::vector<bool>& removed) {
  size_t kept = 0;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (removed[i]) continue;
    if (kept != i) {  // a self-move would empty the node
      graph_.nodes[kept] = std::move(graph_.nodes[i]);
      ops_[kept] = std::move(ops_[i]);
    }
    ++kept;
  }
  graph_.nodes.resize(kept);
  ops_.resize(kept);
  std::set<std::string> read(graph_.outputs.begin(), graph_.outputs.end());
  for (const Node& n : graph_.nodes) read.insert(n.inputs.begin(), n.inputs.end());
  for (auto it = graph_.initializers.begin(); it != graph_.initializers.end();)
    it = read.count(it->first) ? std::next(it) : graph_.initializers.erase(it);
}

}  // namespace minfer
