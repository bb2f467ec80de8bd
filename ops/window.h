// Sliding-window geometry shared by Conv, ConvTranspose and the pools: ONNX's
// kernel_shape/strides/dilations/pads/auto_pad, normalised to 2-D (a 1-D op is a
// 2-D op of height 1), with output sizes and validation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/attributes.h"
#include "graph/shape.h"

namespace minfer {

struct Window2d {
  int64_t kh = 1, kw = 1;  // kernel
  int64_t sh = 1, sw = 1;  // strides
  int64_t dh = 1, dw = 1;  // dilations
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

struct WindowAttrs {
  std::vector<int64_t> kernel_shape;  // empty: take it from the weights
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
};

WindowAttrs parse_window_attrs(const Attributes& attrs);

// Checks the attributes against the input's spatial rank (1 or 2) and resolves
// auto_pad. `kernel` is the spatial kernel size (from kernel_shape or the weights).
Window2d resolve_window(const WindowAttrs& attrs, const Shape& spatial_in, const std::vector<int64_t>& kernel);

// ConvTranspose's geometry: the window as the scatter sees it (input position i reaches
// output i * stride - pad_begin + k * dilation) and the output size. The end pads are
// negative when the output reaches past the last window (output_padding, or an
// output_shape or SAME size larger than the windows cover): those positions get only
// the bias.
struct TransposedWindow {
  Window2d win;
  int64_t out_h = 1, out_w = 1;
};

// Resolves ConvTranspose's pads by ONNX's rules: explicit pads; VALID (none); SAME_UPPER
// or SAME_LOWER (output = input x stride); or output_shape (spatial sizes; pads ignored).
// For the last two the total padding is split with the odd one at the end for SAME_UPPER
// and at the beginning otherwise; a negative total grows the output at the end.
TransposedWindow resolve_transposed_window(const WindowAttrs& attrs, const Shape& spatial_in,
                                           const std::vector<int64_t>& kernel,
                                           const std::vector<int64_t>& output_padding,
                                           const std::vector<int64_t>& output_shape);

// A 2-D convolution's geometry: x [batch, cin, h, w] -> y [batch, cout, out_h, out_w]
// with weights [cout, cin / group, kh, kw] (ONNX's layout). Conv computes it once when it
// binds; the reference and fast kernels all take it.
struct ConvGeometry {
  int64_t batch = 1, cin = 0, h = 0, w = 0, cout = 0, out_h = 0, out_w = 0, group = 1;
  Window2d win;

  int64_t cin_per_group() const { return cin / group; }
  int64_t cout_per_group() const { return cout / group; }
  // Floats of the column buffer conv2d_im2col needs: one group's im2col matrix.
  int64_t col_floats() const { return checked_mul({cin_per_group(), win.kh, win.kw, out_h, out_w}); }
};

// A window cropped to the taps that read the input at some output position: taps
// [ky0, ky0 + win.kh) x [kx0, kx0 + win.kw) of the original, `win` the cropped window
// (the same strides and dilations, pads shrunk by what the dropped taps spanned) that
// gives the same output size.
struct WindowCrop {
  int64_t ky0 = 0, kx0 = 0;
  Window2d win;
};

// g's window cropped, where rows or columns of its taps read only padding at every
// output position (DeepLabV3's 3x3 windows at dilations 24 and 36 over a 14x14 map
// become 1x1); nothing where every tap reads the input somewhere or a crop would need a
// negative pad or change the output size.
std::optional<WindowCrop> crop_to_input(const ConvGeometry& g);

// Output spatial size along one axis; throws OpError when the window does not fit.
int64_t window_output_size(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
                           bool ceil_mode);

// The input's spatial dims as 2-D (H, W): rank-3 [N,C,L] becomes H=1, W=L.
void spatial_dims_2d(const Shape& x, int64_t& h, int64_t& w);

// Output shape [N, channels, spatial...] in the input's own rank.
Shape window_output_shape(const Shape& x, int64_t channels, int64_t out_h, int64_t out_w);

}  // namespace minfer
