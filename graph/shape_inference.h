// Shape inference over a whole graph: each op infers its outputs from its inputs, in
// execution order. Every error becomes a ModelError naming file and node.
#pragma once

#include <string>
#include <unordered_map>

#include "graph/graph.h"
#include "graph/topology.h"
#include "ops/op.h"

namespace minfer {

using ShapeMap = std::unordered_map<std::string, Shape>;

ShapeMap infer_shapes(const Graph& graph, const Topology& topology);

// One node: infers its output shapes from `shapes` (its inputs must be there) and adds
// them. Loaders that need shapes while they build the graph (ONNX) call it node by node.
void infer_node_shapes(const Graph& graph, const Node& node, ShapeMap& shapes);

// What a node's op sees of its inputs: shapes from `shapes`, data of initializers.
ArgInfos arg_infos(const Graph& graph, const Node& node, const ShapeMap& shapes);

// Runs `fn` (op creation, inference, preparation) turning OpError and overflow into
// a ModelError with the node's context.
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
