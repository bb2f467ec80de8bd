// col2im for one image: the adjoint of im2col. It scatter-adds every column entry back
// to the image position im2col would have read it from, which is how ConvTranspose's
// col2im method turns one GEMM's columns into its output.
#pragma once

#include <cstdint>

#include "ops/window.h"

namespace minfer::reference {

// col: [channels * kh * kw, out_h * out_w], as im2col lays it out; x: [channels, h, w],
// added to (the caller initialises it). Entries that fall in the padding are dropped.
void col2im(const float* col, int64_t channels, int64_t h, int64_t w, const Window2d& win, int64_t out_h, int64_t out_w,
            float* x);

}  // namespace minfer::reference
