// Writes the graph IR as an ONNX model (engine_convert net.json model.onnx). Tensor
// types and attributes follow ONNX's own operator schemas (libonnx), so integer-valued
// inputs (Reshape's shape, axes, pads) become int64 again and engine-only attributes
// are left out.
#pragma once

#include <map>
#include <string>

#include "graph/graph.h"

namespace minfer {

// The ONNX opset the writer declares: 13 (the IR's) plus HardSwish, which came in 14.
inline constexpr int kOnnxWriterOpset = 14;

// A serialized ModelProto; `output_types` gives each graph output's type (inferred by
// the engine: this layer knows no op). Throws ModelError for an op ONNX has no schema
// for, or an output without a type.
std::string to_onnx(const Graph& graph, const std::map<std::string, TensorType>& output_types);

}  // namespace minfer
