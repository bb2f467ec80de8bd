// Writes the graph IR as an ONNX model (engine_convert net.json model.onnx). Tensor
// types and attributes follow ONNX's own operator schemas (libonnx), so integer-valued
// inputs (Reshape's shape, axes, pads) become int64 again and engine-only attributes
// are left out.
#pragma once

#include <string>

#include "graph/graph.h"

namespace minfer {

// The ONNX opset the writer declares: 13 (the IR's) plus HardSwish, which came in 14.
inline constexpr int kOnnxWriterOpset = 14;

// A serialized ModelProto. Throws ModelError for an op ONNX has no schema for, or a
// graph whose shapes do not infer.
std::string to_onnx(const Graph& graph);

}  // namespace minfer
