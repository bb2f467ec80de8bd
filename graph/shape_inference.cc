#include "graph/shape_inference.h"

#include <fmt/format.h>

namespace minfer {

ArgInfos arg_infos(const Graph& graph, const Node& node, const ShapeMap& shapes) {
  ArgInfos in;
  in.reserve(node.inputs.size());
  for (const std::string& name : node.inputs) {
    ArgInfo a;
    if (name.empty()) {
      a.present = false;
    } else if (auto it = graph.initializers.find(name); it != graph.initializers.end()) {
      a.shape = it->second.shape;
      a.constant = &it->second;
    } else {
      a.shape = shapes.at(name);
    }
    in.push_back(std::move(a));
  }
  return in;
}

void infer_node_shapes(const Graph& graph, const Node& node, ShapeMap& shapes) {
  with_node_context(graph, node, [&] {
    std::unique_ptr<Op> op = create_op(node);
    std::vector<Shape> out = op->infer_shapes(arg_infos(graph, node, shapes));
    if (node.outputs.size() > out.size())
      throw OpError(fmt::format("has {} outputs, the op produces {}", node.outputs.size(), out.size()));
    // Trailing outputs may be left off, but not all of them (ops' costs read output 0).
    if (node.outputs.empty() && !out.empty() && !op->output_optional(0))
      throw OpError("output 0 is required and cannot be omitted");
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i].empty()) {
        if (!op->output_optional(i)) throw OpError(fmt::format("output {} is required and cannot be omitted", i));
        continue;
      }
      for (int64_t d : out[i])
        if (d <= 0)
          throw UnsupportedError(fmt::format("output '{}' would have shape {}; empty tensors are not supported",
                                             node.outputs[i], shape_str(out[i])));
      num_elements(out[i]);  // throws on overflow
      shapes[node.outputs[i]] = out[i];
    }
  });
}

ShapeMap infer_shapes(const Graph& graph, const Topology& topology) {
  ShapeMap shapes;
  for (const GraphInput& in : graph.inputs) shapes[in.name] = in.shape;
  for (const auto& [name, t] : graph.initializers) shapes[name] = t.shape;
  for (size_t index : topology.order) infer_node_shapes(graph, graph.nodes[index], shapes);
  return shapes;
}

}  // namespace minfer
