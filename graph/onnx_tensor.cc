#include "graph/onnx_tensor.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <filesystem>

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

// One element of raw_data as int64 (integer types) or double (real types).
void decode_raw(DataType type, const std::string& raw, int64_t n, TypedTensor& t) {
  const char* p = raw.data();
  const size_t step = element_bytes(type);
  for (int64_t i = 0; i < n; ++i, p += step) {
    switch (type) {
      case DataType::kUint8: t.ints.push_back(load<uint8_t>(p)); break;
      case DataType::kBool: t.ints.push_back(load<uint8_t>(p) != 0); break;
      case DataType::kInt8: t.ints.push_back(load<int8_t>(p)); break;
      case DataType::kUint16: t.ints.push_back(load<uint16_t>(p)); break;
      case DataType::kInt16: t.ints.push_back(load<int16_t>(p)); break;
      case DataType::kInt32: t.ints.push_back(load<int32_t>(p)); break;
      case DataType::kUint32: t.ints.push_back(load<uint32_t>(p)); break;
      case DataType::kInt64: t.ints.push_back(load<int64_t>(p)); break;
      case DataType::kUint64: t.ints.push_back(static_cast<int64_t>(load<uint64_t>(p))); break;
      case DataType::kFloat: t.reals.push_back(load<float>(p)); break;
      case DataType::kDouble: t.reals.push_back(load<double>(p)); break;
      case DataType::kFloat16: t.reals.push_back(half_to_float(load<uint16_t>(p))); break;
      case DataType::kBFloat16: t.reals.push_back(bfloat16_to_float(load<uint16_t>(p))); break;
      default: break;
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
  if (proto.raw_data().size() % l.step != 0)
    throw OpError(fmt::format("raw_data has {} bytes, not a whole number of {}", proto.raw_data().size(),
                              data_type_name(l.type)));
  check_count(l, static_cast<int64_t>(proto.raw_data().size() / l.step));
  return &proto.raw_data();
}

}  // namespace

TypedTensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir, MemoryBudget* budget) {
  const Layout l = layout_of(proto);
  if (budget) {
    const std::string what = fmt::format("a {} tensor of shape {}", data_type_name(l.type), shape_str(l.shape));
    // External bytes are read whole before they are decoded, then freed.
    if (proto.data_location() == onnx::TensorProto::EXTERNAL) budget->check(tensor_bytes(l.count, static_cast<int64_t>(l.step) + 8), what);
    budget->reserve(tensor_bytes(l.count, 8), what);  // the values, as int64 or double
  }
  TypedTensor t;
  t.type = l.type;
  t.shape = l.shape;
  const int64_t n = l.count;
  std::string storage;
  if (const std::string* raw = raw_bytes(proto, l, base_dir, storage)) {
    decode_raw(t.type, *raw, n, t);
    return t;
  }
  auto check_count = [&](int64_t got) { minfer::check_count(l, got); };
  switch (t.type) {
    case DataType::kFloat:
      check_count(proto.float_data_size());
      t.reals.assign(proto.float_data().begin(), proto.float_data().end());
      break;
    case DataType::kDouble:
      check_count(proto.double_data_size());
      t.reals.assign(proto.double_data().begin(), proto.double_data().end());
      break;
    case DataType::kInt64:
      check_count(proto.int64_data_size());
      t.ints.assign(proto.int64_data().begin(), proto.int64_data().end());
      break;
    case DataType::kUint32:
    case DataType::kUint64:
      check_count(proto.uint64_data_size());
      for (uint64_t v : proto.uint64_data()) t.ints.push_back(static_cast<int64_t>(v));
      break;
    case DataType::kFloat16:
    case DataType::kBFloat16:  // the bit patterns, one per int32
      check_count(proto.int32_data_size());
      for (int32_t v : proto.int32_data()) {
        const auto bits = static_cast<uint16_t>(v);
        t.reals.push_back(t.type == DataType::kFloat16 ? half_to_float(bits) : bfloat16_to_float(bits));
      }
      break;
    default:  // the narrower integer types and bool travel in int32_data
      check_count(proto.int32_data_size());
      for (int32_t v : proto.int32_data()) t.ints.push_back(t.type == DataType::kBool ? v != 0 : v);
      break;
  }
  return t;
}

Tensor float32_from_proto(const onnx::TensorProto& proto, const std::string& base_dir, const std::string& what) {
  if (proto.data_type() != onnx::TensorProto::FLOAT) return to_float32(tensor_from_proto(proto, base_dir), what);
  const Layout l = layout_of(proto);
  for (int64_t d : l.shape)
    if (d == 0) throw UnsupportedError(fmt::format("{} is empty; empty tensors are not supported", what));
  Tensor t{l.shape, std::vector<float>(static_cast<size_t>(l.count))};
  std::string storage;
  if (const std::string* raw = raw_bytes(proto, l, base_dir, storage)) {
    std::memcpy(t.data.data(), raw->data(), 4 * t.data.size());  // little-endian float32, as the host
  } else {
    check_count(l, proto.float_data_size());
    std::copy(proto.float_data().begin(), proto.float_data().end(), t.data.begin());
  }
  return t;
}

TypedTensor read_tensor_file(const std::string& path) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(read_file_within_limit(path, default_max_memory())))
    throw ModelError(path + ": not a serialized ONNX TensorProto");
  try {
    return tensor_from_proto(proto, std::filesystem::path(path).parent_path().string());
  } catch (const UnsupportedError& e) {
    throw UnsupportedModelError(path + ": " + e.what());
  } catch (const std::exception& e) {
    throw ModelError(path + ": " + e.what());
  }
}

void tensor_to_proto(const std::string& name, const Tensor& tensor, onnx::TensorProto& proto) {
  proto.set_name(name);
  proto.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : tensor.shape) proto.add_dims(d);
  proto.set_raw_data(std::string(reinterpret_cast<const char*>(tensor.data.data()), 4 * tensor.data.size()));
}

void int_tensor_to_proto(const std::string& name, const Tensor& tensor, onnx::TensorProto& proto) {
  proto.set_name(name);
  proto.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : tensor.shape) proto.add_dims(d);
  for (float v : tensor.data) proto.add_int64_data(static_cast<int64_t>(v));
}

}  // namespace minfer
