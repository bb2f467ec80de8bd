// Loads a net.json model (shared/spec/net-json.md) into the graph IR, checking every
// key, type and initializer size; errors name the file and the offending key or node.
#pragma once

#include <string>

#include "graph/graph.h"

namespace minfer {

// Throws ModelError.
Graph load_netjson(const std::string& path);

// Deterministic "random" initializer data (He-uniform for rank >= 2, see docs/model-format.md).
std::vector<float> random_init(const Shape& shape, uint64_t seed);
uint64_t default_seed(const std::string& initializer_name);

}  // namespace minfer
