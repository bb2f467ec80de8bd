// Load-time constant folding for the ONNX importer: evaluates the ops of shape
// computations (Constant, Shape, Gather, Slice, Concat, Unsqueeze, ...) on values known
// at load time, so that a model exported for dynamic shapes becomes a static graph of
// the engine's ops. Works on TypedTensor (int64 shape data included), not on float32.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/attributes.h"
#include "graph/memory_limit.h"
#include "graph/typed_tensor.h"

namespace minfer {

struct FoldInput {
  const TypedTensor* value = nullptr;  // null when the value is only known at run time
  Shape shape;                         // always known
  bool present = true;                 // false for an omitted optional input
};

struct FoldNode {
  std::string op_type;
  int opset = 13;  // of the default domain: Slice and Squeeze moved attributes to inputs
  Attributes attrs;
  std::map<std::string, TypedTensor> tensor_attrs;  // TENSOR attributes (Constant's value)
};

// Op types the folder evaluates.
bool is_foldable_op(const std::string& op_type);

// True when `node` is foldable and every input it reads is known (Shape and Size need
// only their input's shape).
bool can_fold(const FoldNode& node, const std::vector<FoldInput>& in);

// The node's outputs. Throws OpError for an invalid node or for a tensor that would
// pass the memory limit (checked against `budget` before it is allocated; the caller
// counts the outputs), UnsupportedError for a valid one the folder does not implement
// (a string Constant, say).
std::vector<TypedTensor> fold(const FoldNode& node, const std::vector<FoldInput>& in, const MemoryBudget& budget);

}  // namespace minfer
