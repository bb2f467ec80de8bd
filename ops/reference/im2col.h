// im2col for one image: turns convolution into a GEMM by laying every receptive
// field out as a column.
#pragma once

#include <cstdint>

#include "ops/window.h"

namespace minfer::reference {

// x: [channels, h, w]; col: [channels * kh * kw, out_h * out_w]; padding reads as 0.
void im2col(const float* x, int64_t channels, int64_t h, int64_t w, const Window2d& win, int64_t out_h, int64_t out_w,
            float* col);

}  // namespace minfer::reference
