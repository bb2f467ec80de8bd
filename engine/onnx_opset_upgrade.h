// Rewrites nodes of older ONNX opsets into the opset-13 form the ops implement, where the
// semantics changed: Softmax's 2-D coercion, legacy broadcasting (broadcast/axis
// attributes), per-channel PRelu slopes, Reshape's shape attribute, is_test flags. Part
// of compiling, not of loading, because some rewrites need the inputs' shapes.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace minfer {

struct UpgradedNode {
  std::vector<Node> nodes;                  // in execution order; one keeps the node's name
  std::map<std::string, Tensor> constants;  // new constant tensors the nodes read
};

// `opset` is the model's default-domain opset; `shape_of` gives the shape of any tensor
// defined so far. Throws UnsupportedError for legacy semantics the engine lacks
// (BatchNormalization in training mode).
UpgradedNode upgrade_to_opset13(Node node, int opset, const std::function<Shape(const std::string&)>& shape_of);

}  // namespace minfer
