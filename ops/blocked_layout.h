// The blocked layout NCHWc as the graph sees it: a 4-D [N, C, H, W] tensor whose channels
// are a multiple of c stored as the 5-D [N, C / c, H, W, c], c the lanes of the target's
// blocked kernels (16 on AVX-512, 8 on AVX2). The blocked_layout pass
// (engine/passes/blocked_layout.h) gives an op's node the attributes below when it reads
// or writes that layout, and puts Reorder nodes (ops/reorder.cc) where a tensor changes
// layout; the values are those of the NCHW tensor, so are the costs.
#pragma once

#include <cstdint>
#include <string>

#include "graph/shape.h"
#include "profiler/isa.h"

namespace minfer {

// Node attributes (int, the lanes c; absent or 0 for NCHW).
inline constexpr const char* kBlockedInputAttr = "blocked_input";    // input 0 is NCHWc
inline constexpr const char* kBlockedOutputAttr = "blocked_output";  // output 0 (and a residual) are NCHWc

// [N, C / c, H, W, c] from [N, C, H, W]; throws OpError unless C is a multiple of c.
Shape blocked_shape(const Shape& nchw, int64_t lanes);
// [N, C, H, W] from [N, C / c, H, W, c]; throws OpError unless the shape is 5-D with
// c lanes last.
Shape unblocked_shape(const Shape& nchwc, int64_t lanes);
// "NCHW16c" for 16 lanes, "NCHW" for 0.
std::string layout_name(int64_t lanes);
// The c of isa's blocked kernels (the blocked convolution's lanes), 0 without them.
int64_t blocked_lanes(Isa isa);

}  // namespace minfer
