// The graph IR both loaders produce: ONNX's graph as written (opset, nodes, attributes,
// typed constants and inputs with static shapes). It knows nothing of what ops compute.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/attributes.h"
#include "graph/errors.h"
#include "graph/shape.h"
#include "graph/tensor.h"

namespace minfer {

struct GraphInput {
  std::string name;
  Shape shape;
  DType dtype = DType::kFloat32;
};

struct Node {
  std::string name;
  std::string op_type;
  std::vector<std::string> inputs;   // "" marks an omitted optional input, as in ONNX
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  Attributes attrs;
};

// How an image becomes the model's first input (net.json "preprocess"): pixels scaled to
// [0, 1], then (x - mean[c]) / std[c]; a single value applies to every channel.
struct Preprocess {
  std::vector<float> mean{0.0f}, std{1.0f};
};

struct Graph {
  std::string name;
  std::string source;  // the file it was loaded from; prefixes every error message
  // The opset of ONNX's default domain the nodes follow (net.json: 13). The engine
  // upgrades older ones where the meaning changed.
  int opset = 13;
  std::vector<GraphInput> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Tensor> initializers;
  std::vector<Node> nodes;
  // The branches of ONNX If nodes (nodes, constants and outputs; no inputs), which an If
  // names by index in its then_branch and else_branch attributes; the If's inputs after
  // its condition are the outer values its branches read. Compiling runs the branch its
  // condition picks (engine/compile_graph.cc); nested Ifs' branches are listed here too.
  std::vector<Graph> branches;
  Preprocess preprocess;
  std::string labels_file;          // as the model names it; empty if none
  std::vector<std::string> labels;  // its lines: the name of each output class
  // The files beside it that it was read from (weights, external data, labels), so that
  // no output replaces one.
  std::vector<std::string> data_files;

  const Node* find_node(const std::string& name) const;
};

// "<source>: node '<name>' (<op>)": the prefix of every message about a node.
std::string node_context(const Graph& graph, const Node& node);

// Runs fn, turning an OpError (or an overflow) about the node into a ModelError with its
// context, and an UnsupportedError into an UnsupportedModelError.
template <typename Fn>
auto with_node_context(const Graph& graph, const Node& node, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const UnsupportedError& e) {
    throw UnsupportedModelError(node_context(graph, node) + ": " + e.what());
  } catch (const OpError& e) {
    throw ModelError(node_context(graph, node) + ": " + e.what());
  } catch (const std::overflow_error& e) {
    throw ModelError(node_context(graph, node) + ": " + e.what());
  }
}

}  // namespace minfer
