#include "graph/dtype.h"

#include <fmt/format.h>

namespace minfer {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
  }
  return "?";
}

int64_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
  }
  return 0;
}

std::string data_type_name(DataType type) {
  switch (type) {
    case DataType::kUndefined: return "undefined";
    case DataType::kFloat: return "float32";
    case DataType::kUint8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUint16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kDouble: return "float64";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kBFloat16: return "bfloat16";
  }
  return fmt::format("type {}", static_cast<int32_t>(type));
}

std::optional<DType> engine_dtype(DataType type) {
  switch (type) {
    case DataType::kFloat:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kDouble: return DType::kFloat32;
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUint32:
    case DataType::kUint64: return DType::kInt64;
    case DataType::kBool: return DType::kBool;
    default: return std::nullopt;
  }
}

DataType onnx_data_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return DataType::kFloat;
    case DType::kInt64: return DataType::kInt64;
    case DType::kBool: return DataType::kBool;
  }
  return DataType::kUndefined;
}

}  // namespace minfer
