#include "ops/reference/col2im.h"

#include <algorithm>

namespace minfer::reference {
namespace {

// The columns ox in [first, end) of a column row whose image column ox * stride + offset
// lies in [0, w): found once per row, so the adds need no test per entry (ConvTranspose
// spent a fifth of a decoder's time in this loop when it tested each one).
struct ColumnRange {
  int64_t first, end;
};

ColumnRange columns_inside(int64_t offset, int64_t stride, int64_t w, int64_t out_w) {
  const int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const int64_t end = w - 1 - offset < 0 ? 0 : std::min(out_w, (w - 1 - offset) / stride + 1);
  return {first, std::max(first, end)};
}

// dst[ox * stride + offset] += src[ox] for ox in [first, end).
void add_columns(const float* src, int64_t first, int64_t end, int64_t stride, int64_t offset, float* dst) {
  if (stride == 1)
    for (int64_t ox = first; ox < end; ++ox) dst[ox + offset] += src[ox];
  else
    for (int64_t ox = first; ox < end; ++ox) dst[ox * stride + offset] += src[ox];
}

}  // namespace

void col2im(const float* col, int64_t channels, int64_t h, int64_t w, const Window2d& win, int64_t out_h, int64_t out_w,
            float* x) {
  for (int64_t c = 0; c < channels; ++c) {
    float* xc = x + c * h * w;
    for (int64_t ki = 0; ki < win.kh; ++ki) {
      for (int64_t kj = 0; kj < win.kw; ++kj) {
        const float* row = col + ((c * win.kh + ki) * win.kw + kj) * out_h * out_w;
        const int64_t offset = kj * win.dw - win.pad_left;
        const auto [first, end] = columns_inside(offset, win.sw, w, out_w);
        for (int64_t oy = 0; oy < out_h; ++oy) {
          const int64_t iy = oy * win.sh - win.pad_top + ki * win.dh;
          if (iy >= 0 && iy < h) add_columns(row + oy * out_w, first, end, win.sw, offset, xc + iy * w);
        }
      }
    }
  }
}

}  // namespace minfer::reference
