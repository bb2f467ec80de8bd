// Loading a model file of any supported format into the graph IR.
#pragma once

#include <map>
#include <string>

#include "graph/graph.h"

namespace minfer {

// Chooses the loader by extension (.json: net.json). Throws ModelError.
Graph load_model(const std::string& path);

// Replaces graph input shapes (engine_bench --input_shape); throws UsageError for an
// unknown input or a non-positive dimension.
void override_input_shapes(Graph& graph, const std::map<std::string, Shape>& shapes);

// Parses "name:1,3,224,224" (several separated by ';'); throws UsageError.
std::map<std::string, Shape> parse_input_shapes(const std::string& spec);

}  // namespace minfer
