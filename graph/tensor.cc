#include "graph/tensor.h"

#include <fmt/format.h>

#include <cstring>

#include "graph/errors.h"

namespace minfer {

std::string type_str(const TensorType& type) {
  return fmt::format("{} {}", dtype_name(type.dtype), shape_str(type.shape));
}

Tensor::Tensor(DType dtype, Shape shape)
    : type_{dtype, std::move(shape)},
      size_(num_elements(type_.shape)),
      storage_(std::make_shared<AlignedBuffer>(checked_mul({size_, dtype_size(dtype)}))) {}

Tensor::Tensor(Shape shape, std::vector<float> values) : Tensor(DType::kFloat32, std::move(shape)) {
  if (static_cast<int64_t>(values.size()) != size_)
    throw OpError(fmt::format("{} values for a tensor of shape {}", values.size(), shape_str(type_.shape)));
  if (!values.empty()) std::memcpy(storage_->data(), values.data(), values.size() * sizeof(float));
}

Tensor::Tensor(Shape shape, std::vector<int64_t> values) : Tensor(DType::kInt64, std::move(shape)) {
  if (static_cast<int64_t>(values.size()) != size_)
    throw OpError(fmt::format("{} values for a tensor of shape {}", values.size(), shape_str(type_.shape)));
  if (!values.empty()) std::memcpy(storage_->data(), values.data(), values.size() * sizeof(int64_t));
}

std::byte* Tensor::mutable_data() {
  if (storage_.use_count() > 1) {
    auto copy = std::make_shared<AlignedBuffer>(storage_->bytes());
    if (storage_->bytes() > 0) std::memcpy(copy->data(), storage_->data(), static_cast<size_t>(storage_->bytes()));
    storage_ = std::move(copy);
  }
  return storage_->data();
}

double Tensor::number(int64_t i) const {
  switch (dtype()) {
    case DType::kFloat32: return values<float>()[i];
    case DType::kInt64: return static_cast<double>(values<int64_t>()[i]);
    case DType::kBool: return values<uint8_t>()[i];
  }
  return 0;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (num_elements(shape) != size_)
    throw OpError(fmt::format("cannot view {} as {}", shape_str(type_.shape), shape_str(shape)));
  Tensor t = *this;
  t.type_.shape = std::move(shape);
  return t;
}

void Tensor::check_dtype(DType want) const {
  if (dtype() != want) throw OpError(fmt::format("a {} tensor read as {}", dtype_name(dtype()), dtype_name(want)));
}

}  // namespace minfer
