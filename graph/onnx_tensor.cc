#include "graph/onnx_tensor.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "graph/errors.h"
#include "graph/input_file.h"
#include "graph/memory_limit.h"

namespace minfer {

namespace {

// Bytes per element in raw_data; 0 for types the engine never reads.
size_t element_bytes(DataType type) {
  switch (type) {
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kBool: return 1;
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16: return 2;
    case DataType::kFloat:
    case DataType::kInt32:
    case DataType::kUint32: return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kDouble: return 8;
    default: return 0;
  }
}

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // raw_data is little-endian, as is every host this builds for
  return v;
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

// The float32 nearest to `v`, with values past float32's range as infinities (a plain
// cast of those is undefined behaviour in C++).
float narrow_to_float(double v) {
  if (std::isnan(v) || std::fabs(v) <= std::numeric_limits<float>::max()) return static_cast<float>(v);
  return v > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
}

// Element i of raw little-endian data of `type`, stored into `out` at i in its engine type.
void decode_raw(DataType type, const std::string& raw, Tensor& out) {
  const char* p = raw.data();
  const size_t step = element_bytes(type);
  const int64_t n = out.size();
  switch (out.dtype()) {
    case DType::kFloat32: {
      std::span<float> v = out.mutable_values<float>();
      if (type == DataType::kFloat) {
        std::memcpy(v.data(), p, 4 * v.size());
        return;
      }
      for (int64_t i = 0; i < n; ++i, p += step)
        v[i] = type == DataType::kDouble    ? narrow_to_float(load<double>(p))
               : type == DataType::kFloat16 ? half_to_float(load<uint16_t>(p))
                                            : bfloat16_to_float(load<uint16_t>(p));
      return;
    }
    case DType::kInt64: {
      std::span<int64_t> v = out.mutable_values<int64_t>();
      for (int64_t i = 0; i < n; ++i, p += step) {
        switch (type) {
          case DataType::kUint8: v[i] = load<uint8_t>(p); break;
          case DataType::kInt8: v[i] = load<int8_t>(p); break;
          case DataType::kUint16: v[i] = load<uint16_t>(p); break;
          case DataType::kInt16: v[i] = load<int16_t>(p); break;
          case DataType::kInt32: v[i] = load<int32_t>(p); break;
          case DataType::kUint32: v[i] = load<uint32_t>(p); break;
          case DataType::kUint64: v[i] = static_cast<int64_t>(load<uint64_t>(p)); break;
          default: v[i] = load<int64_t>(p); break;
        }
      }
      return;
    }
    case DType::kBool: {
      std::span<uint8_t> v = out.mutable_values<uint8_t>();
      for (int64_t i = 0; i < n; ++i) v[i] = p[i] != 0;
      return;
    }
  }
}

// An external_data number ('offset', 'length'): decimal digits, at most 2^63 - 1.
uint64_t external_number(const std::string& key, const std::string& text) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && stop == end && v > INT64_MAX))
    throw OpError(fmt::format("external data '{}' {} is beyond the range of 64-bit integers", key, excerpt(text)));
  if (ec != std::errc() || stop != end)
    throw OpError(fmt::format("external data '{}' is '{}', not a non-negative integer", key, excerpt(text)));
  return v;
}

std::string read_external(const onnx::TensorProto& proto, const std::string& base_dir, size_t bytes) {
  std::string location;
  uint64_t offset = 0;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      offset = external_number("offset", entry.value());
    } else if (entry.key() == "length") {
      const uint64_t length = external_number("length", entry.value());
      if (length != bytes)
        throw OpError(fmt::format("external data 'length' is {} bytes, the tensor has {}", length, bytes));
    }
  }
  if (location.empty()) throw OpError("external data without a 'location'");
  try {
    const InputFile file = open_model_file(base_dir, location, "external data file");
    if (offset > file.size() || bytes > file.size() - offset)  // checked before allocating `bytes`
      throw OpError(fmt::format("external data file '{}' ends before byte {}", location, offset + bytes));
    std::string data(bytes, '\0');
    file.read_at(offset, data.data(), bytes);
    return data;
  } catch (const FileError& e) {
    throw OpError(e.what());
  }
}

struct Layout {
  DataType type;
  Shape shape;
  int64_t count;  // elements
  size_t step;    // bytes per element in raw form
};

Layout layout_of(const onnx::TensorProto& proto) {
  Layout l{static_cast<DataType>(proto.data_type()), {}, 0, 0};
  for (int64_t d : proto.dims()) {
    if (d < 0) throw OpError(fmt::format("dimension {} is negative", d));
    l.shape.push_back(d);
  }
  l.count = num_elements(l.shape);
  l.step = element_bytes(l.type);
  if (l.step == 0) throw UnsupportedError(fmt::format("data type {} is not supported", data_type_name(l.type)));
  if (proto.has_segment()) throw UnsupportedError("segmented tensors are not supported");
  return l;
}

void check_count(const Layout& l, int64_t got) {
  if (got != l.count)
    throw OpError(fmt::format("holds {} values, shape {} needs {}", got, shape_str(l.shape), l.count));
}

// The little-endian bytes of a tensor stored raw (raw_data or an external file), or
// null for one stored in the typed fields. External bytes are read into `storage`.
const std::string* raw_bytes(const onnx::TensorProto& proto, const Layout& l, const std::string& base_dir,
                             std::string& storage) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    storage = read_external(proto, base_dir, static_cast<size_t>(checked_mul({static_cast<int64_t>(l.step), l.count})));
    return &storage;
  }
  if (!proto.has_raw_data()) return nullptr;
  // ONNX leaves the typed fields empty when raw_data is present; both would be two
  // answers to one question.
  if (proto.float_data_size() + proto.int32_data_size() + proto.int64_data_size() + proto.double_data_size() +
          proto.uint64_data_size() + proto.string_data_size() !=
      0)
    throw OpError("holds values both in raw_data and in a typed field such as float_data; ONNX allows one");
  if (proto.raw_data().size() % l.step != 0)
    throw OpError(fmt::format("raw_data has {} bytes, not a whole number of {}", proto.raw_data().size(),
                              data_type_name(l.type)));
  check_count(l, static_cast<int64_t>(proto.raw_data().size() / l.step));
  return &proto.raw_data();
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir, MemoryBudget* budget) {
  const Layout l = layout_of(proto);
  const std::optional<DType> dtype = engine_dtype(l.type);
  if (!dtype) throw UnsupportedError(fmt::format("data type {} is not supported", data_type_name(l.type)));
  if (budget) {
    const std::string what = fmt::format("a {} tensor of shape {}", data_type_name(l.type), shape_str(l.shape));
    // External bytes are read whole before they are decoded, then freed.
    if (proto.data_location() == onnx::TensorProto::EXTERNAL)
      budget->check(tensor_bytes(l.count, static_cast<int64_t>(l.step) + dtype_size(*dtype)), what);
    budget->reserve(tensor_bytes(l.count, dtype_size(*dtype)), what);
  }
  Tensor t(*dtype, l.shape);
  std::string storage;
  if (const std::string* raw = raw_bytes(proto, l, base_dir, storage)) {
    decode_raw(l.type, *raw, t);
    return t;
  }
  auto fill = [&](const auto& field, auto convert) {
    check_count(l, field.size());
    int64_t i = 0;
    switch (t.dtype()) {
      case DType::kFloat32:
        for (const auto& v : field) t.mutable_values<float>()[i++] = narrow_to_float(convert(v));
        break;
      case DType::kInt64:
        for (const auto& v : field) t.mutable_values<int64_t>()[i++] = static_cast<int64_t>(convert(v));
        break;
      case DType::kBool:
        for (const auto& v : field) t.mutable_values<uint8_t>()[i++] = convert(v) != 0;
        break;
    }
  };
  auto same = [](auto v) { return v; };
  switch (l.type) {
    case DataType::kFloat: fill(proto.float_data(), [](float v) { return double(v); }); break;
    case DataType::kDouble: fill(proto.double_data(), same); break;
    case DataType::kInt64: fill(proto.int64_data(), same); break;
    case DataType::kUint32:
    case DataType::kUint64: fill(proto.uint64_data(), [](uint64_t v) { return static_cast<int64_t>(v); }); break;
    case DataType::kFloat16:
      fill(proto.int32_data(), [](int32_t v) { return double(half_to_float(uint16_t(v))); });
      break;
    case DataType::kBFloat16:
      fill(proto.int32_data(), [](int32_t v) { return double(bfloat16_to_float(uint16_t(v))); });
      break;
    default: fill(proto.int32_data(), same); break;  // the narrower integer types and bool travel in int32_data
  }
  return t;
}

TensorFile read_tensor_file(const std::string& path) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(read_file_within_limit(path, default_max_memory())))
    throw ModelError(path + ": not a serialized ONNX TensorProto");
  try {
    return {tensor_from_proto(proto, std::filesystem::path(path).parent_path().string()),
            static_cast<DataType>(proto.data_type())};
  } catch (const UnsupportedError& e) {
    throw UnsupportedModelError(path + ": " + e.what());
  } catch (const std::exception& e) {
    throw ModelError(path + ": " + e.what());
  }
}

void tensor_to_proto(const std::string& name, const Tensor& tensor, onnx::TensorProto& proto, DataType as) {
  proto.set_name(name);
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  if (as == DataType::kInt64 && tensor.dtype() == DType::kFloat32) {
    proto.set_data_type(onnx::TensorProto::INT64);
    for (float v : tensor.values<float>()) proto.add_int64_data(static_cast<int64_t>(v));
    return;
  }
  proto.set_data_type(static_cast<int32_t>(onnx_data_type(tensor.dtype())));
  proto.set_raw_data(std::string(reinterpret_cast<const char*>(tensor.data()), static_cast<size_t>(tensor.bytes())));
}

}  // namespace minfer
