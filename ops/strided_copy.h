// The copy behind the ops that move elements without arithmetic (Slice, Transpose,
// Expand, Tile, Pad, DepthToSpace): every element of an index space, read and written
// through a stride per axis. The axes are simplified once, when the op binds (axes of
// size 1 dropped, neighbours contiguous on both sides merged), so that the copy runs as
// whole-row memcpys where rows are contiguous, as tiled 2-D transposes where the
// source's contiguous axis is not the destination's, and element by element only
// otherwise; a per-element index computation took ShuffleNetV2's channel Slices 16 ns an
// element (docs/performance.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/shape.h"

namespace minfer {

class StridedCopy {
 public:
  StridedCopy() = default;
  // For every index i of `dims`: dst[sum_d i_d * dst_strides[d]] = src[sum_d i_d *
  // src_strides[d]], strides in elements of `bytes` bytes (negative: backwards; 0 on the
  // source: one element repeated). Throws std::invalid_argument when the ranks differ.
  StridedCopy(const Shape& dims, const Shape& src_strides, const Shape& dst_strides, int64_t bytes);

  // The copy, from src + src_offset elements to dst + dst_offset elements; up to
  // `threads` threads (kernels/threads.h's policy for streaming work) split its outermost
  // loop, each a contiguous range of it.
  void run(const void* src, void* dst, int64_t src_offset = 0, int64_t dst_offset = 0, int threads = 1) const;

 private:
  struct Axis {
    int64_t size, src_stride, dst_stride;
  };
  static constexpr size_t kMaxAxes = 16;
  enum class Inner { kRows, kRepeat, kTranspose, kElements };
  void run_range(const std::byte* src, std::byte* dst, int64_t src_offset, int64_t dst_offset, int64_t begin,
                 int64_t end) const;

  std::vector<Axis> outer_;                // looped over; the innermost one (and the transposed one) excluded
  Axis inner_{1, 1, 1}, across_{1, 0, 0};  // kTranspose: across_ is the source's contiguous axis
  Inner kind_ = Inner::kRows;
  int64_t bytes_ = 4;
  int64_t elements_ = 1;  // copied
  bool empty_ = false;
};

// Dense (row-major) strides of a shape, in elements.
Shape dense_strides(const Shape& shape);

}  // namespace minfer
