#include "graph/typed_tensor.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "graph/errors.h"

namespace minfer {

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

bool is_integer_type(DataType type) {
  switch (type) {
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kBool:
    case DataType::kUint32:
    case DataType::kUint64: return true;
    default: return false;
  }
}

bool is_real_type(DataType type) {
  return type == DataType::kFloat || type == DataType::kDouble || type == DataType::kFloat16 ||
         type == DataType::kBFloat16;
}

TypedTensor int_tensor(Shape shape, std::vector<int64_t> values, DataType type) {
  TypedTensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.ints = std::move(values);
  return t;
}

TypedTensor real_tensor(Shape shape, std::vector<double> values, DataType type) {
  TypedTensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.reals = std::move(values);
  return t;
}

Tensor to_float32(const TypedTensor& t, const std::string& what) {
  for (int64_t d : t.shape)
    if (d <= 0)
      throw UnsupportedError(fmt::format("{} has shape {}; empty tensors are not supported", what, shape_str(t.shape)));
  Tensor out{t.shape, {}};
  out.data.reserve(static_cast<size_t>(t.size()));
  if (!t.is_integer()) {
    for (double v : t.reals) out.data.push_back(narrow_to_float(v));
    return out;
  }
  for (int64_t v : t.ints) {
    const float f = static_cast<float>(v);
    // 2^63 is the first float past int64's range; below it the round trip is exact iff f == v.
    if (!(std::fabs(f) < 0x1.0p63f) || static_cast<int64_t>(f) != v)
      throw UnsupportedError(fmt::format("{} holds the {} value {}, which float32 cannot represent exactly", what,
                                         data_type_name(t.type), v));
    out.data.push_back(f);
  }
  return out;
}

float narrow_to_float(double v) {
  if (std::isnan(v) || std::fabs(v) <= std::numeric_limits<float>::max()) return static_cast<float>(v);
  return v > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal
  } else if (exponent == 31) {
    magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  }
  return sign ? -magnitude : magnitude;
}

float bfloat16_to_float(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;  // bfloat16 is float32's upper half
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

}  // namespace minfer
