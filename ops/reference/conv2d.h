// Plain scalar convolution of one image, in the two GEMM forms Conv chooses between:
// im2col + GEMM for any window, and a direct GEMM over the input for 1x1 windows.
// ConvTranspose's conv method runs the im2col form over its zero-inserted input.
#pragma once

#include <cstdint>

#include "ops/window.h"

namespace minfer::reference {

// Each function computes one image of the geometry (its batch is not read):
// x [cin, h, w] -> y [cout, out_h, out_w].

// Any window; col is scratch of s.col_floats() floats. bias may be null.
void conv2d_im2col(const ConvGeometry& s, const float* x, const float* weights, const float* bias, float* y,
                   float* col);

// 1x1 window, unit stride, no padding: the input already is the column matrix, so each
// group is one GEMM reading it in place.
void conv2d_pointwise(const ConvGeometry& s, const float* x, const float* weights, const float* bias, float* y);

// y[c, :] += bias[c] for `channels` planes of `plane` elements; bias may be null.
void add_bias(float* y, int64_t channels, int64_t plane, const float* bias);

}  // namespace minfer::reference
