#include "ops/reference/conv2d.h"

#include "ops/reference/gemm.h"
#include "ops/reference/im2col.h"

namespace minfer::reference {

void add_bias(float* y, int64_t channels, int64_t plane, const float* bias) {
  if (!bias) return;
  for (int64_t c = 0; c < channels; ++c) {
    float* row = y + c * plane;
    for (int64_t i = 0; i < plane; ++i) row[i] += bias[c];
  }
}

void conv2d_im2col(const ConvGeometry& s, const float* x, const float* weights, const float* bias, float* y,
                   float* col) {
  const int64_t out_hw = s.out_h * s.out_w;
  const int64_t m = s.cout_per_group(), k = s.cin_per_group() * s.win.kh * s.win.kw;
  for (int64_t g = 0; g < s.group; ++g) {
    im2col(x + g * s.cin_per_group() * s.h * s.w, s.cin_per_group(), s.h, s.w, s.win, s.out_h, s.out_w, col);
    gemm(false, false, m, out_hw, k, 1.0f, weights + g * m * k, k, col, out_hw, 0.0f, y + g * m * out_hw, out_hw);
  }
  add_bias(y, s.cout, out_hw, bias);
}

void conv2d_pointwise(const ConvGeometry& s, const float* x, const float* weights, const float* bias, float* y) {
  const int64_t hw = s.h * s.w;
  const int64_t m = s.cout_per_group(), k = s.cin_per_group();
  for (int64_t g = 0; g < s.group; ++g)
    gemm(false, false, m, hw, k, 1.0f, weights + g * m * k, k, x + g * k * hw, hw, 0.0f, y + g * m * hw, hw);
  add_bias(y, s.cout, hw, bias);
}

}  // namespace minfer::reference
