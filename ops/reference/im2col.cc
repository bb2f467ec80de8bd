#include "ops/reference/im2col.h"

namespace minfer::reference {

void im2col(const float* x, int64_t channels, int64_t h, int64_t w, const Window2d& win, int64_t out_h, int64_t out_w,
            float* col) {
  for (int64_t c = 0; c < channels; ++c) {
    const float* xc = x + c * h * w;
    for (int64_t ki = 0; ki < win.kh; ++ki) {
      for (int64_t kj = 0; kj < win.kw; ++kj) {
        float* row = col + ((c * win.kh + ki) * win.kw + kj) * out_h * out_w;
        for (int64_t oy = 0; oy < out_h; ++oy) {
          const int64_t iy = oy * win.sh - win.pad_top + ki * win.dh;
          float* dst = row + oy * out_w;
          if (iy < 0 || iy >= h) {
            for (int64_t ox = 0; ox < out_w; ++ox) dst[ox] = 0.0f;
            continue;
          }
          for (int64_t ox = 0; ox < out_w; ++ox) {
            const int64_t ix = ox * win.sw - win.pad_left + kj * win.dw;
            dst[ox] = (ix >= 0 && ix < w) ? xc[iy * w + ix] : 0.0f;
          }
        }
      }
    }
  }
}

}  // namespace minfer::reference
