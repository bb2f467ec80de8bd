// Rewrites nodes of older ONNX opsets into the form the ops implement (opset 13's, or
// the op's newest where it came later), where the semantics changed: Softmax's 2-D
// coercion, legacy broadcasting (broadcast/axis attributes), per-channel PRelu slopes,
// Reshape's shape attribute, is_test flags, GroupNormalization's per-group scale and
// bias before opset 21. Part of compiling, not of loading, because some rewrites need the
// inputs' shapes.
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

// Models of this opset or newer need no rewrite (GroupNormalization's is the latest).
inline constexpr int kOpsetWithoutUpgrades = 21;

// `opset` is the model's default-domain opset; `shape_of` gives the shape of any tensor
// defined so far. Throws UnsupportedError for legacy semantics the engine lacks
// (BatchNormalization in training mode).
UpgradedNode upgrade_to_opset13(Node node, int opset, const std::function<Shape(const std::string&)>& shape_of);

}  // namespace minfer
