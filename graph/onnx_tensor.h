// ONNX TensorProto <-> tensors: initializers, Constant values and the .pb files of the
// backend-test layout. The only file besides the ONNX loader and writer that sees the
// protobuf classes.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "graph/memory_limit.h"
#include "graph/typed_tensor.h"

namespace minfer {

// Decodes any numeric TensorProto (typed fields or raw_data; external data relative to
// `base_dir`). Throws UnsupportedError for strings, complex numbers and sparse data,
// OpError for a malformed tensor (wrong value count, unreadable external file). With a
// budget, the decoded values (and external bytes while they are read) count against
// the memory limit before they are allocated.
TypedTensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                              MemoryBudget* budget = nullptr);

// The engine's float32 form directly (float32 data is copied once, not widened to
// float64 on the way); other types as to_float32(tensor_from_proto(...)).
Tensor float32_from_proto(const onnx::TensorProto& proto, const std::string& base_dir, const std::string& what);

// A serialized TensorProto file (input_0.pb); throws ModelError naming the file.
TypedTensor read_tensor_file(const std::string& path);

// A float32 tensor as a TensorProto with raw_data.
void tensor_to_proto(const std::string& name, const Tensor& tensor, onnx::TensorProto& proto);
// An integer-valued float32 tensor as an int64 TensorProto (shape inputs, axes, pads).
void int_tensor_to_proto(const std::string& name, const Tensor& tensor, onnx::TensorProto& proto);

}  // namespace minfer
