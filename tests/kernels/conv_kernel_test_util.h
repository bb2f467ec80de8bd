// Shared pieces of the direct convolution kernel tests: shapes, the activations every
// epilogue is tested with, a naive convolution with its epilogue to compare against, and
// thread-kept scratch.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/activation.h"
#include "ops/kernels/workspace.h"
#include "ops/reference/conv2d.h"

namespace minfer::test {

// `threads` pieces of `floats` (whole lines) thread-kept scratch on cache lines, as in a
// session's arena, all NaN: a kernel must write whatever it reads there.
struct KeptScratch {
  KeptScratch(int threads, int64_t floats) : storage(threads * floats + 16, NAN) {
    const auto at = reinterpret_cast<uintptr_t>(storage.data());
    own = ThreadScratch(reinterpret_cast<std::byte*>((at + 63) / 64 * 64), threads, 4 * floats);
  }
  std::vector<float> storage;
  ThreadScratch own;
};

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
          {K::kSwish, 1.0f},
          {K::kSwish, 0.5f},
          {K::kCelu, 0.8f},
          {K::kShrink, 0.3f, 0.1f},
          {K::kMish}};
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

// y[n, oc, oy, ox] = act(bias[oc] + sum over the group's channels and the window of x * w).
inline std::vector<float> naive_conv(const ConvGeometry& s, int64_t batch, const std::vector<float>& x,
                                     const std::vector<float>& wt, const float* bias, const Activation& act) {
  const Window2d& w = s.win;
  const int64_t cig = s.cin_per_group(), cog = s.cout_per_group();
  std::vector<float> y(batch * s.cout * s.out_h * s.out_w);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t oc = 0; oc < s.cout; ++oc)
      for (int64_t oy = 0; oy < s.out_h; ++oy)
        for (int64_t ox = 0; ox < s.out_w; ++ox) {
          double acc = bias ? bias[oc] : 0.0;
          for (int64_t ic = 0; ic < cig; ++ic)
            for (int64_t ky = 0; ky < w.kh; ++ky)
              for (int64_t kx = 0; kx < w.kw; ++kx) {
                const int64_t iy = oy * w.sh - w.pad_top + ky * w.dh, ix = ox * w.sw - w.pad_left + kx * w.dw;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                acc += double(x[((n * s.cin + oc / cog * cig + ic) * s.h + iy) * s.w + ix]) *
                       wt[((oc * cig + ic) * w.kh + ky) * w.kw + kx];
              }
          y[((n * s.cout + oc) * s.out_h + oy) * s.out_w + ox] = act.apply(static_cast<float>(acc));
        }
  return y;
}

inline std::string describe(const ConvGeometry& s, int64_t batch) {
  const Window2d& w = s.win;
  return fmt::format("batch {} cin {} {}x{} cout {} group {} kernel {}x{} stride {} dilation {} pads {},{},{},{}",
                     batch, s.cin, s.h, s.w, s.cout, s.group, w.kh, w.kw, w.sh, w.dh, w.pad_top, w.pad_left,
                     w.pad_bottom, w.pad_right);
}

}  // namespace minfer::test
