// col2im is the adjoint of im2col: <im2col(x), c> == <x, col2im(c)> for any x and c
// (up to col2im's float sums; a wrong index is off by O(1)),
// which pins down every index of the scatter without a second copy of its loops.
#include <gtest/gtest.h>

#include "ops/reference/col2im.h"
#include "ops/reference/im2col.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}

TEST(Col2im, IsTheAdjointOfIm2col) {
  struct Case {
    int64_t channels, h, w;
    Window2d win;
  };
  // Window2d: kh, kw, sh, sw, dh, dw, pad_top, pad_left, pad_bottom, pad_right.
  const Case cases[] = {
      {2, 5, 5, {3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
      {3, 7, 6, {4, 2, 2, 3, 1, 1, 1, 0, 2, 1}},
      {1, 9, 8, {3, 3, 2, 2, 2, 3, 2, 3, 2, 3}},
      {2, 1, 11, {1, 3, 1, 2, 1, 1, 0, 1, 0, 1}},
      {2, 6, 6, {3, 3, 1, 1, 1, 1, -1, -2, 0, 0}}};  // negative pads crop, as ConvTranspose's conv method uses
  for (const Case& c : cases) {
    const Window2d& w = c.win;
    const int64_t out_h = (c.h + w.pad_top + w.pad_bottom - (w.kh - 1) * w.dh - 1) / w.sh + 1;
    const int64_t out_w = (c.w + w.pad_left + w.pad_right - (w.kw - 1) * w.dw - 1) / w.sw + 1;
    const int64_t col_size = c.channels * w.kh * w.kw * out_h * out_w;
    const std::vector<float> x = random_values(c.channels * c.h * c.w, 21);
    const std::vector<float> cols = random_values(col_size, 22);
    std::vector<float> im2col_x(col_size), col2im_c(x.size(), 0.0f);
    reference::im2col(x.data(), c.channels, c.h, c.w, w, out_h, out_w, im2col_x.data());
    reference::col2im(cols.data(), c.channels, c.h, c.w, w, out_h, out_w, col2im_c.data());
    const double lhs = dot(im2col_x, cols), rhs = dot(x, col2im_c);
    EXPECT_NEAR(lhs, rhs, 1e-5) << c.channels << "x" << c.h << "x" << c.w;
    EXPECT_NE(rhs, 0.0);
  }
}

TEST(Col2im, AddsToWhatIsThere) {
  // One channel, 2x2 image, 1x1 window: col2im adds the columns onto the image.
  std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> cols = {10, 20, 30, 40};
  reference::col2im(cols.data(), 1, 2, 2, Window2d{}, 2, 2, x.data());
  EXPECT_EQ(x, (std::vector<float>{11, 22, 33, 44}));
}

}  // namespace
}  // namespace minfer::test
