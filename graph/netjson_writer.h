// Writes the graph IR as net.json (docs/model-format.md) plus its weights file:
// the inverse of load_netjson, bit for bit (engine_convert model.onnx net.json).
#pragma once

#include <string>

#include "graph/graph.h"

namespace minfer {

struct NetJsonFiles {
  std::string json;
  std::string weights;  // the weights file's bytes; empty when every initializer is inline
};

// Initializers of up to kInlineElements finite values are written inline ("data"); the
// others go to the weights file, little-endian float32 at "offset", named
// `weights_file` in the JSON (a path relative to it). Throws ModelError for an
// attribute JSON cannot hold (NaN, infinity).
NetJsonFiles to_netjson(const Graph& graph, const std::string& weights_file);

inline constexpr size_t kInlineElements = 16;

}  // namespace minfer
