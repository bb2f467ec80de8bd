// Constant tensor data (initializers, folded values, attribute tensors): typed,
// row-major, 64-byte aligned. Copies share the bytes; mutable_values() first takes a
// private copy when they are shared, so a tensor several graphs hold never changes
// under them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

#include "graph/aligned_buffer.h"
#include "graph/dtype.h"
#include "graph/shape.h"

namespace minfer {

// A tensor's type: what inference computes for every value of a graph.
struct TensorType {
  DType dtype = DType::kFloat32;
  Shape shape;
  friend bool operator==(const TensorType&, const TensorType&) = default;
};

// "float32 1x3x224x224"
std::string type_str(const TensorType& type);

class Tensor {
 public:
  Tensor() : Tensor(DType::kFloat32, Shape{0}) {}
  // Zeros. Dimensions may be 0 (shape computations meet empty tensors).
  Tensor(DType dtype, Shape shape);
  Tensor(Shape shape, std::vector<float> values);
  Tensor(Shape shape, std::vector<int64_t> values);
  // float32 from a list of numbers: Tensor({2}, {1.0f, 24.0f}).
  Tensor(Shape shape, std::initializer_list<float> values) : Tensor(std::move(shape), std::vector<float>(values)) {}

  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  const TensorType& type() const { return type_; }
  int64_t size() const { return size_; }
  int64_t bytes() const { return size_ * dtype_size(type_.dtype); }
  const std::byte* data() const { return storage_->data(); }
  std::byte* mutable_data();

  // The elements as T (float, int64_t or uint8_t for bool); throws OpError when the
  // tensor holds another type.
  template <typename T>
  std::span<const T> values() const {
    check_dtype(dtype_of<T>());
    return {reinterpret_cast<const T*>(storage_->data()), static_cast<size_t>(size_)};
  }
  template <typename T>
  std::span<T> mutable_values() {
    check_dtype(dtype_of<T>());
    return {reinterpret_cast<T*>(mutable_data()), static_cast<size_t>(size_)};
  }
  // Element i of any type as a double (messages, integer-valued inputs).
  double number(int64_t i) const;
  // The same data under another shape of as many elements (Reshape of a constant).
  Tensor reshaped(Shape shape) const;

 private:
  void check_dtype(DType want) const;

  TensorType type_;
  int64_t size_ = 0;
  std::shared_ptr<AlignedBuffer> storage_;
};

}  // namespace minfer
