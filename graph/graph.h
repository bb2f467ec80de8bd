// The graph IR both loaders produce: ONNX's graph, float32 NCHW, with static shapes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/attributes.h"
#include "graph/shape.h"

namespace minfer {

// Constant data (initializers): row-major float32.
struct Tensor {
  Shape shape;
  std::vector<float> data;
};

struct GraphInput {
  std::string name;
  Shape shape;
};

struct Node {
  std::string name;
  std::string op_type;
  std::vector<std::string> inputs;  // "" marks an omitted optional input, as in ONNX
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
  std::vector<GraphInput> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Tensor> initializers;
  std::vector<Node> nodes;
  Preprocess preprocess;
  std::string labels_file;          // as the model names it; empty if none
  std::vector<std::string> labels;  // its lines: the name of each output class

  const Node* find_node(const std::string& name) const;
};

// "<source>: node '<name>' (<op>)": the prefix of every message about a node.
std::string node_context(const Graph& graph, const Node& node);

}  // namespace minfer
