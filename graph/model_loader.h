// Loading a model file of any supported format into the graph IR.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/memory_limit.h"
#include "graph/onnx_loader.h"

namespace minfer {

// What a caller fixes when loading. input_shapes replace the declared ones before any
// shape is inferred (ONNX inputs with dynamic dimensions need them); input_values turn
// inputs into constants (engine_check binds integer inputs such as Reshape's shape);
// the file and the constant data it holds must fit in max_memory (graph/memory_limit.h).
struct LoadOptions {
  std::map<std::string, Shape> input_shapes;
  std::map<std::string, Tensor> input_values;
  int64_t max_memory = default_max_memory();
};

// Chooses the loader by extension (.json: net.json, .onnx: ONNX). Throws ModelError
// (UnsupportedModelError for what the engine lacks) or UsageError for options naming
// no graph input.
Graph load_model(const std::string& path, const LoadOptions& options = {});

// The graph inputs a caller feeds, in the file's order, as declared (net.json: float32
// tensors of fixed shapes), without loading the model.
std::vector<InputSignature> model_inputs(const std::string& path);

// Replaces graph input shapes (engine_bench --input_shape); throws UsageError for an
// unknown input or a non-positive dimension.
void override_input_shapes(Graph& graph, const std::map<std::string, Shape>& shapes);

// Parses "name:1,3,224,224" (several separated by ';'); throws UsageError.
std::map<std::string, Shape> parse_input_shapes(const std::string& spec);

}  // namespace minfer
