// Loads a net.json model (docs/model-format.md) into the graph IR, checking every
// key, type and initializer size; errors name the file and the offending key or node.
#pragma once

#include <string>
#include <string_view>

#include "graph/graph.h"
#include "graph/memory_limit.h"

namespace minfer {

// Throws ModelError. Constant data (and the JSON text, which parsing expands) counts
// against `max_memory` before it is allocated.
Graph load_netjson(const std::string& path, int64_t max_memory = default_max_memory());

// The same from text in memory: `source` names it in messages; the weights and labels
// files it names are looked up in `base_dir`.
Graph parse_netjson(std::string_view text, const std::string& source, const std::string& base_dir,
                    int64_t max_memory = default_max_memory());

// Deterministic "random" initializer data (He-uniform for rank >= 2, see docs/model-format.md).
std::vector<float> random_init(const Shape& shape, uint64_t seed);
uint64_t default_seed(const std::string& initializer_name);

}  // namespace minfer
