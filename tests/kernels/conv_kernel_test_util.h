// Shared pieces of the direct convolution kernel tests: shapes, the activations every
// epilogue is tested with, and the reference result with its epilogue.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "ops/activation.h"
#include "ops/reference/conv2d.h"

namespace minfer::test {

// One activation of each kind, with non-default parameters where it has any.
inline std::vector<Activation> every_activation() {
  using K = ActivationKind;
  return {{K::kNone},
          {K::kRelu},
          {K::kClip, -0.25f, 0.5f},
          {K::kLeakyRelu, 0.1f},
          {K::kElu, 0.7f},
          {K::kSelu, 1.6732f, 0.0f, 1.0507f},
          {K::kSigmoid},
          {K::kHardSigmoid, 0.2f, 0.5f},
          {K::kHardSwish},
          {K::kTanh},
          {K::kSoftplus},
          {K::kSwish, 1.0f}};
}

inline ConvGeometry conv_shape(int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t group, int64_t k,
                               int64_t stride, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t dilation = 1) {
  ConvGeometry s;
  s.cin = cin, s.h = h, s.w = w, s.cout = cout, s.group = group;
  s.win = {k, k, stride, stride, dilation, dilation, pt, pl, pb, pr};
  const int64_t extent = (k - 1) * dilation + 1;
  s.out_h = (h + pt + pb - extent) / stride + 1;
  s.out_w = (w + pl + pr - extent) / stride + 1;
  return s;
}

inline bool window_fits(const ConvGeometry& s) {
  const int64_t extent_h = (s.win.kh - 1) * s.win.dh + 1, extent_w = (s.win.kw - 1) * s.win.dw + 1;
  return s.h + s.win.pad_top + s.win.pad_bottom >= extent_h && s.w + s.win.pad_left + s.win.pad_right >= extent_w;
}

inline std::string describe(const ConvGeometry& s, int64_t batch) {
  const Window2d& w = s.win;
  return fmt::format("batch {} cin {} {}x{} cout {} group {} kernel {}x{} stride {} dilation {} pads {},{},{},{}",
                     batch, s.cin, s.h, s.w, s.cout, s.group, w.kh, w.kw, w.sh, w.dh, w.pad_top, w.pad_left,
                     w.pad_bottom, w.pad_right);
}

}  // namespace minfer::test
