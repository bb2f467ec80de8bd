#include "ops/reference/depthwise_conv.h"

namespace minfer::reference {

void depthwise_conv2d(const ConvGeometry& s, const float* x, const float* weights, const float* bias, float* y) {
  const Window2d& win = s.win;
  const int64_t multiplier = s.cout / s.cin;
  for (int64_t oc = 0; oc < s.cout; ++oc) {
    const float* xc = x + (oc / multiplier) * s.h * s.w;
    const float* kernel = weights + oc * win.kh * win.kw;
    float* yc = y + oc * s.out_h * s.out_w;
    const float b = bias ? bias[oc] : 0.0f;
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      for (int64_t ox = 0; ox < s.out_w; ++ox) {
        float acc = b;
        for (int64_t ki = 0; ki < win.kh; ++ki) {
          const int64_t iy = oy * win.sh - win.pad_top + ki * win.dh;
          if (iy < 0 || iy >= s.h) continue;
          for (int64_t kj = 0; kj < win.kw; ++kj) {
            const int64_t ix = ox * win.sw - win.pad_left + kj * win.dw;
            if (ix >= 0 && ix < s.w) acc += xc[iy * s.w + ix] * kernel[ki * win.kw + kj];
          }
        }
        yc[oy * s.out_w + ox] = acc;
      }
    }
  }
}

}  // namespace minfer::reference
