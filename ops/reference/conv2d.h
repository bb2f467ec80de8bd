// Plain scalar convolution of one image, in the two GEMM forms Conv chooses between:
// im2col + GEMM for any window, and a direct GEMM over the input for 1x1 windows.
// ConvTranspose's conv method runs the im2col form over its zero-inserted input.
#pragma once

#include <cstdint>

#include "ops/window.h"

namespace minfer::reference {

// x [cin, h, w] -> y [cout, out_h, out_w] with weights [cout, cin / group, kh, kw]
// (ONNX's layout) and an optional bias [cout].
struct Conv2dShape {
  int64_t cin = 0, h = 0, w = 0, cout = 0, out_h = 0, out_w = 0, group = 1;
  Window2d win;

  int64_t cin_per_group() const { return cin / group; }
  int64_t cout_per_group() const { return cout / group; }
  // Floats of the column buffer conv2d_im2col needs: one group's im2col matrix.
  int64_t col_floats() const { return checked_mul({cin_per_group(), win.kh, win.kw, out_h, out_w}); }
};

// Any window; col is scratch of s.col_floats() floats. bias may be null.
void conv2d_im2col(const Conv2dShape& s, const float* x, const float* weights, const float* bias, float* y, float* col);

// 1x1 window, unit stride, no padding: the input already is the column matrix, so each
// group is one GEMM reading it in place.
void conv2d_pointwise(const Conv2dShape& s, const float* x, const float* weights, const float* bias, float* y);

// y[c, :] += bias[c] for `channels` planes of `plane` elements; bias may be null.
void add_bias(float* y, int64_t channels, int64_t plane, const float* bias);

}  // namespace minfer::reference
