// Tensors of any ONNX element type, as the ONNX importer and engine_check meet them
// before they become the engine's float32: the constant folder computes on them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace minfer {

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
bool is_integer_type(DataType type);  // the integer types and bool
bool is_real_type(DataType type);     // float16, bfloat16, float32, float64

// Values live in `reals` (real types, as float64) or `ints` (integer types and bool,
// as int64), never both. Shapes may hold zeros here: shape computations meet empty
// tensors even where the engine runs none.
struct TypedTensor {
  DataType type = DataType::kFloat;
  Shape shape;
  std::vector<double> reals;
  std::vector<int64_t> ints;

  bool is_integer() const { return is_integer_type(type); }
  int64_t size() const { return static_cast<int64_t>(is_integer() ? ints.size() : reals.size()); }
  // Element i as a number of either kind.
  double real(int64_t i) const { return is_integer() ? static_cast<double>(ints[i]) : reals[i]; }
};

TypedTensor int_tensor(Shape shape, std::vector<int64_t> values, DataType type = DataType::kInt64);
TypedTensor real_tensor(Shape shape, std::vector<double> values, DataType type = DataType::kFloat);

// The engine's float32 form. Integers must be exactly representable in float32
// (|v| <= 2^24 always is); throws UnsupportedError naming `what` otherwise, and for
// empty tensors.
Tensor to_float32(const TypedTensor& t, const std::string& what);

// The float32 nearest to `v`, with values past float32's range as infinities (a plain
// cast of those is undefined behaviour in C++).
float narrow_to_float(double v);

// IEEE half and bfloat16 bit patterns to float.
float half_to_float(uint16_t bits);
float bfloat16_to_float(uint16_t bits);

}  // namespace minfer
