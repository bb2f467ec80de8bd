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
  // The source stride of each output dim, 0 where broadcast.
  const std::vector<int64_t>& strides() const { return strides_; }

 private:
  std::vector<int64_t> dims_;     // output dims
  std::vector<int64_t> strides_;  // source strides per output dim, 0 where broadcast
};

// A run of consecutive output elements along which every input is either contiguous
// (stride 1) or one repeated element (stride 0): the output's longest suffix of dims
// where that holds. Same shapes make one row of everything; x[N,C,H,W] * s[1,C,1,1]
// rows of H*W; the index arithmetic is per row, the rows plain loops.
struct BroadcastRow {
  int64_t length = 1;
  std::vector<int64_t> strides;  // per input, 0 or 1
};
BroadcastRow broadcast_row(const Shape& out, const std::vector<Shape>& inputs);

}  // namespace minfer
