#include "engine/onnx_opset_upgrade.h"

#include <fmt/format.h>

#include "graph/errors.h"

namespace minfer {
namespace {

const std::string& input(const Node& node, size_t index) {
  if (index >= node.inputs.size() || node.inputs[index].empty()) throw OpError(fmt::format("missing input {}", index));
  return node.inputs[index];
}

bool is_binary_arithmetic(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div";
}

// Inserts an Unsqueeze that appends `count` unit dims to input `index` of `node`.
void append_unit_dims(UpgradedNode& up, Node& node, size_t index, int64_t rank, int64_t count, const char* what) {
  if (count <= 0) return;
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < count; ++i) axes.push_back(rank + i);
  Node unsqueeze{node.name + "/" + what, "Unsqueeze", {node.inputs[index]}, {node.name + "/" + what + "_out"}, {}};
  unsqueeze.attrs.set("axes", axes);
  node.inputs[index] = unsqueeze.outputs[0];
  up.nodes.push_back(std::move(unsqueeze));
}

// Before opset 13, Softmax and LogSoftmax flatten the input to 2-D at `axis` (default
// 1) and normalise each row: the same as opset 13 only when axis is the last one.
void upgrade_softmax(UpgradedNode& up, Node node, const Shape& x) {
  const int64_t rank = static_cast<int64_t>(x.size());
  if (node.outputs.empty()) throw OpError("has no output");
  int64_t axis = node.attrs.get_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) throw OpError(fmt::format("axis {} is out of range for rank {}", axis, rank));
  if (axis == rank - 1) {
    node.attrs.set("axis", int64_t{-1});
    up.nodes.push_back(std::move(node));
    return;
  }
  const std::string flat = node.name + "/2d", normalized = node.name + "/normalized", shape = node.name + "/shape";
  Node flatten{node.name + "/flatten", "Flatten", {node.inputs[0]}, {flat}, {}};
  flatten.attrs.set("axis", axis);
  Node reshape{node.name + "/reshape", "Reshape", {normalized, shape}, {node.outputs.at(0)}, {}};
  node.inputs[0] = flat;
  node.outputs[0] = normalized;
  node.attrs.set("axis", int64_t{1});
  up.constants[shape] = Tensor({rank}, std::vector<int64_t>(x));
  up.nodes.push_back(std::move(flatten));
  up.nodes.push_back(std::move(node));
  up.nodes.push_back(std::move(reshape));
}

}  // namespace

UpgradedNode upgrade_to_opset13(Node node, int opset, const std::function<Shape(const std::string&)>& shape_of) {
  UpgradedNode up;
  const std::string& op = node.op_type;
  // A memory-reuse hint of opset 1; it never changed results.
  if (opset < 7) node.attrs.erase("consumed_inputs");

  if ((op == "BatchNormalization" || op == "Dropout") && opset < 7) {
    // Test mode was opt-in (is_test, default 0) until opset 7.
    if (node.attrs.get_int("is_test", 0) == 0) throw UnsupportedError("is_test=0 (training mode) is not supported");
    node.attrs.erase("is_test");
  }
  if (op == "Dropout" && opset < 10 && node.outputs.size() > 1 && !node.outputs[1].empty())
    throw UnsupportedError("the mask output before opset 10 (of the data's type, not bool) is not supported");
  if (op == "Gemm" && opset < 7) node.attrs.erase("broadcast");  // numpy broadcasting of C covers it
  if (op == "Concat" && opset < 4 && !node.attrs.has("axis")) node.attrs.set("axis", int64_t{1});
  if (op == "Pad" && opset < 2 && node.attrs.has("paddings")) {
    node.attrs.set("pads", node.attrs.get_ints("paddings"));
    node.attrs.erase("paddings");
  }
  if (op == "Reshape" && opset < 5 && node.attrs.has("shape")) {
    const std::vector<int64_t> shape = node.attrs.get_ints("shape");
    const std::string name = node.name + "/shape";
    up.constants[name] = Tensor({static_cast<int64_t>(shape.size())}, shape);
    node.inputs.resize(1);
    node.inputs.push_back(name);
    node.attrs.erase("shape");
  }
  if (op == "Slice" && opset < 10) {
    // starts, ends and axes were attributes; they became inputs in opset 10.
    node.inputs.resize(1);
    for (const char* name : {"starts", "ends", "axes"}) {
      if (!node.attrs.has(name)) continue;
      const std::vector<int64_t> v = node.attrs.get_ints(name);
      const std::string tensor = node.name + "/" + name;
      up.constants[tensor] = Tensor({static_cast<int64_t>(v.size())}, v);
      node.inputs.push_back(tensor);
      node.attrs.erase(name);
    }
  }
  if (is_binary_arithmetic(op) && opset < 7) {
    // Legacy broadcasting: B's dims align with A's starting at `axis` (trailing dims when
    // absent), which numpy broadcasting matches once B has A's trailing unit dims.
    const bool broadcast = node.attrs.get_int("broadcast", 0) != 0;
    const int64_t rank_a = static_cast<int64_t>(shape_of(input(node, 0)).size());
    const int64_t rank_b = static_cast<int64_t>(shape_of(input(node, 1)).size());
    if (broadcast && node.attrs.has("axis")) {
      int64_t axis = node.attrs.get_int("axis", 0);
      if (axis < 0) axis += rank_a;
      append_unit_dims(up, node, 1, rank_b, rank_a - axis - rank_b, "align");
    }
    node.attrs.erase("broadcast");
    node.attrs.erase("axis");
  }
  if (op == "PRelu" && opset < 7) {
    // The slope was per channel (axis 1); numpy broadcasting needs [C, 1, ..., 1].
    const Shape x = shape_of(input(node, 0)), slope = shape_of(input(node, 1));
    if (slope.size() == 1 && x.size() > 2 && slope[0] == x[1])
      append_unit_dims(up, node, 1, 1, static_cast<int64_t>(x.size()) - 2, "per_channel");
  }
  if (op == "GroupNormalization" && opset >= 18 && opset < 21) {
    // Scale and bias were per group in opsets 18 to 20 (the op is 18's; the IR's, as in
    // net.json, is 21's), per channel from 21: each group's value repeated over its
    // C / num_groups channels (folded when constant).
    const int64_t groups = node.attrs.get_int("num_groups", 1);
    const Shape x = shape_of(input(node, 0));
    if (x.size() < 2 || groups < 1 || x[1] % groups != 0)
      throw OpError(fmt::format("num_groups {} does not divide the channels of X {}", groups, shape_str(x)));
    for (size_t i : {size_t{1}, size_t{2}}) {
      const std::string base = fmt::format("{}/{}_per_channel", node.name, i == 1 ? "scale" : "bias");
      Node column{base + "/column", "Unsqueeze", {input(node, i)}, {base + "/column_out"}, {}};
      column.attrs.set("axes", std::vector<int64_t>{1});
      Node repeat{base + "/repeat", "Expand", {column.outputs[0], base + "/repeat_shape"}, {base + "/repeat_out"}, {}};
      Node flat{base + "/flatten", "Reshape", {repeat.outputs[0], base + "/flat_shape"}, {base}, {}};
      up.constants[base + "/repeat_shape"] = Tensor({2}, std::vector<int64_t>{groups, x[1] / groups});
      up.constants[base + "/flat_shape"] = Tensor({1}, std::vector<int64_t>{x[1]});
      node.inputs[i] = base;
      for (Node* n : {&column, &repeat, &flat}) up.nodes.push_back(std::move(*n));
    }
  }
  if ((op == "Softmax" || op == "LogSoftmax") && opset < 13) {
    const Shape x = shape_of(input(node, 0));
    upgrade_softmax(up, std::move(node), x);
    return up;
  }
  up.nodes.push_back(std::move(node));
  return up;
}

}  // namespace minfer
