// ONNX TensorProto <-> tensors: initializers, Constant values and the .pb files of the
// backend-test layout. The only file besides the ONNX loader and writer that sees the
// protobuf classes.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "graph/memory_limit.h"
#include "graph/tensor.h"

namespace minfer {

// Decodes a TensorProto (typed fields or raw_data; external data relative to
// `base_dir`) into the engine's element type. Throws UnsupportedError for strings,
// complex numbers and segmented data, OpError for a malformed tensor (wrong value
// count, unreadable external file). With a budget, the decoded values (and external
// bytes while they are read) count against the memory limit before they are allocated.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir, MemoryBudget* budget = nullptr);

// A serialized TensorProto file (input_0.pb) with the type the file declares; throws
// ModelError naming the file.
struct TensorFile {
  Tensor tensor;
  DataType declared = DataType::kUndefined;
};
TensorFile read_tensor_file(const std::string& path);

// A tensor as a TensorProto with raw_data, of the tensor's own type or, for a float32
// tensor holding integers (net.json's Reshape shapes), as int64.
void tensor_to_proto(const std::string& name, const Tensor& tensor, onnx::TensorProto& proto,
                     DataType as = DataType::kUndefined);

}  // namespace minfer
