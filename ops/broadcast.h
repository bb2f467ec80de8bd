// ONNX (numpy) multidirectional broadcasting: the result shape, and the map from an
// output element to the element of an input it reads.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/shape.h"

namespace minfer {

// Throws OpError when the shapes are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);

class BroadcastIndex {
 public:
  BroadcastIndex() = default;
  // `from` must broadcast to `to`.
  BroadcastIndex(const Shape& from, const Shape& to);

  // Flat index into `from` read by flat output index `i`.
  int64_t source(int64_t i) const {
    int64_t src = 0;
    for (size_t d = dims_.size(); d-- > 0;) {
      const int64_t coord = i % dims_[d];
      i /= dims_[d];
      src += coord * strides_[d];
    }
    return src;
  }
  // Stride of the source along the output's innermost dim: 0 (broadcast) or 1.
  int64_t inner_stride() const { return strides_.empty() ? 0 : strides_.back(); }
  int64_t inner_size() const { return dims_.empty() ? 1 : dims_.back(); }

 private:
  std::vector<int64_t> dims_;     // output dims
  std::vector<int64_t> strides_;  // source strides per output dim, 0 where broadcast
};

}  // namespace minfer
