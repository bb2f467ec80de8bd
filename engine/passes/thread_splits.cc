#include "engine/passes/thread_splits.h"

#include <optional>

#include "engine/passes/tensor_uses.h"

namespace minfer {
namespace {

// A Conv's weight shape [M, C / group, kh, kw], where it is a known 4-D shape.
std::optional<Shape> weight_shape(const CompileGraph& g, const Node& conv) {
  if (conv.op_type != "Conv" || conv.inputs.size() < 2 || conv.inputs[1].empty()) return std::nullopt;
  const Shape& w = g.type(conv.inputs[1]).shape;
  if (w.size() != 4) return std::nullopt;
  return w;
}

bool is_pointwise(const CompileGraph& g, const Node& conv) {
  const std::optional<Shape> w = weight_shape(g, conv);
  return w && (*w)[2] == 1 && (*w)[3] == 1 && conv.attrs.get_int("group", 1) == 1;
}

// One input channel per group, one output channel per input channel.
bool is_depthwise(const CompileGraph& g, const Node& conv) {
  const std::optional<Shape> w = weight_shape(g, conv);
  const Shape& x = g.type(conv.inputs[0]).shape;
  const int64_t group = conv.attrs.get_int("group", 1);
  return w && x.size() == 4 && group > 1 && group == x[1] && (*w)[0] == group && (*w)[1] == 1;
}

}  // namespace

PassLog thread_splits(CompileGraph& g) {
  PassLog log{"thread_splits", {}};
  const TensorUses uses(g);
  for (size_t i = 0; i < g.size(); ++i) {
    const Node node = g.node(i);
    if (node.outputs.size() != 1 || !is_pointwise(g, node) || node.attrs.has(kSplitOutputChannelsAttr)) continue;
    const std::optional<size_t> reader = uses.only_reader_of_type(g, node.outputs[0], "Conv");
    if (!reader || g.node(*reader).inputs[0] != node.outputs[0] || !is_depthwise(g, g.node(*reader))) continue;
    Attributes attrs = node.attrs;
    attrs.set(kSplitOutputChannelsAttr, int64_t{1});
    const Cost cost = g.cost(i);
    g.set_attributes(i, std::move(attrs));
    log.actions.push_back({"split",
                           {node.name, g.node(*reader).name},
                           node.name,
                           "its only reader, a depthwise convolution, splits channels",
                           cost,
                           cost,
                           node.op_type});
  }
  return log;
}

}  // namespace minfer
