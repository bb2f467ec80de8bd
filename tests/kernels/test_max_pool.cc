// The SIMD max pool of every target under test against a direct loop written here:
// output widths around the vector widths, strides 1 and 2, padding, ceil_mode
// overhang, vertical stride and dilation, NaN and -inf inputs, one and two threads.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/kernels/max_pool.h"
#include "tests/isa_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

using kernels::PoolShape;

// The output size with ceil_mode's overhang when `ceil` (no window starting in the end
// padding), as ONNX and PyTorch define it.
int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceil) {
  const int64_t span = in + pb + pe - (k - 1) * d - 1;
  int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (o - 1) * s >= in + pb) --o;
  return o;
}

PoolShape shape(int64_t h, int64_t w, int64_t k, int64_t sh, int64_t sw, int64_t dh, int64_t pad, bool ceil) {
  PoolShape s;
  s.h = h;
  s.w = w;
  s.win = {k, k, sh, sw, dh, 1, pad, pad, pad, pad};
  s.out_h = out_size(h, k, sh, dh, pad, pad, ceil);
  s.out_w = out_size(w, k, sw, 1, pad, pad, ceil);
  return s;
}

// A NaN anywhere in the window gives NaN; otherwise the largest value inside the input.
std::vector<float> naive(const PoolShape& s, int64_t planes, const std::vector<float>& x) {
  std::vector<float> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < s.out_h; ++oy)
      for (int64_t ox = 0; ox < s.out_w; ++ox) {
        float m = -std::numeric_limits<float>::infinity();
        bool nan = false;
        for (int64_t ki = 0; ki < s.win.kh; ++ki)
          for (int64_t kj = 0; kj < s.win.kw; ++kj) {
            const int64_t iy = oy * s.win.sh - s.win.pad_top + ki * s.win.dh;
            const int64_t ix = ox * s.win.sw - s.win.pad_left + kj;
            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
            const float v = x[(p * s.h + iy) * s.w + ix];
            nan = nan || std::isnan(v);
            m = std::max(m, v);
          }
        y.push_back(nan ? std::numeric_limits<float>::quiet_NaN() : m);
      }
  return y;
}

void expect_same(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << i;
    else
      EXPECT_EQ(got[i], want[i]) << i;
  }
}

TEST(MaxPoolKernel, MatchesADirectLoop) {
  std::vector<PoolShape> shapes;
  for (int64_t w : {1, 5, 14, 17, 33, 56})
    for (bool ceil : {false, true}) {
      shapes.push_back(shape(w, w, 3, 2, 2, 1, 0, ceil));  // ResNet/GoogLeNet/SqueezeNet's 3x3/2
      shapes.push_back(shape(w, w, 3, 1, 1, 1, 1, ceil));  // GoogLeNet's 3x3/1 in each inception
      shapes.push_back(shape(w, w, 2, 2, 2, 1, 0, ceil));  // VGG's 2x2/2
      shapes.push_back(shape(w, w, 5, 1, 2, 1, 2, ceil));  // a 5x5 with padding, stride 2 across
      shapes.push_back(shape(w, w, 3, 3, 1, 2, 1, ceil));  // vertical stride 3 and dilation 2
    }
  const int64_t planes = 5;
  for (Isa isa : isas_under_test())
    for (const PoolShape& s : shapes) {
      if (isa == Isa::kScalar) continue;  // the generic loop, tested through the op
      if (s.out_h < 1 || s.out_w < 1) continue;
      SCOPED_TRACE(testing::Message() << isa_name(isa) << " " << s.h << "x" << s.w << " k" << s.win.kh << " s"
                                      << s.win.sh << "x" << s.win.sw << " d" << s.win.dh << " p" << s.win.pad_top
                                      << " out " << s.out_h << "x" << s.out_w);
      const kernels::MaxPoolKernel* k = kernels::find_max_pool_kernel(s, isa);
      ASSERT_NE(k, nullptr);
      std::vector<float> x = random_values(planes * s.h * s.w, static_cast<uint32_t>(s.w * 7 + s.win.kh), -4, 4);
      x[x.size() / 3] = std::numeric_limits<float>::quiet_NaN();
      x[x.size() / 2] = -std::numeric_limits<float>::infinity();
      for (int threads : {1, 2}) {
        std::vector<float> y(planes * s.out_h * s.out_w, 99.0f);
        std::vector<float> scratch(kernels::max_pool_workspace_floats(*k, s, planes, threads));
        kernels::max_pool2d(*k, s, planes, x.data(), y.data(), scratch, threads);
        expect_same(y, naive(s, planes, x));
      }
    }
}

TEST(MaxPoolKernel, OtherShapesRunTheGenericLoop) {
  for (Isa isa : isas_under_test()) {
    SCOPED_TRACE(isa_name(isa));
    EXPECT_EQ(kernels::find_max_pool_kernel(shape(9, 9, 3, 3, 3, 1, 0, false), isa), nullptr);  // stride 3
    PoolShape dilated = shape(9, 9, 3, 1, 1, 1, 0, false);
    dilated.win.dw = 2;
    EXPECT_EQ(kernels::find_max_pool_kernel(dilated, isa), nullptr);
    EXPECT_EQ(kernels::find_max_pool_kernel(shape(40, 40, 17, 1, 1, 1, 0, false), isa), nullptr);  // wide
    EXPECT_EQ(kernels::find_max_pool_kernel(shape(40, 40, 16, 1, 1, 1, 0, false), isa) != nullptr, isa != Isa::kScalar);
  }
}

}  // namespace
}  // namespace minfer::test
