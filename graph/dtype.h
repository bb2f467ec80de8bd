// The element types the engine computes with, and ONNX's element types, which model
// files and Cast name: loaders widen every integer type to int64 and every real type
// to float32.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

namespace minfer {

enum class DType : uint8_t { kFloat32, kInt64, kBool };

// "float32", "int64", "bool" (numpy's names).
const char* dtype_name(DType dtype);
// Bytes per element: 4, 8, 1 (bool is one byte holding 0 or 1).
int64_t dtype_size(DType dtype);

// The C++ type of an element: float, int64_t, uint8_t (bool).
template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>)
    return DType::kFloat32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::kInt64;
  else {
    static_assert(std::is_same_v<T, uint8_t>, "elements are float, int64_t or uint8_t (bool)");
    return DType::kBool;
  }
}

// ONNX's TensorProto.DataType codes.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
};

// "float32", "int64", ... (numpy's names); "type <code>" for codes ONNX may add later.
std::string data_type_name(DataType type);

// The engine's element type for a file's: integers widen to int64, float16, bfloat16
// and float64 become float32, bool stays bool; nullopt for strings and complex numbers.
std::optional<DType> engine_dtype(DataType type);
// The file's type for an engine element type (float32 -> FLOAT, ...).
DataType onnx_data_type(DType dtype);

}  // namespace minfer
