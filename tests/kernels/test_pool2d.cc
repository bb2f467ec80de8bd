// The SIMD max and average pools of every target under test against direct loops written
// here (the window-order folds of nan_max and of the sum, compared bit for bit): output
// widths around the vector widths, strides 1 and 2, padding, ceil_mode overhang, vertical
// stride and dilation, NaN, -inf and signed-zero inputs, one and two threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ops/kernels/pool2d.h"
#include "tests/isa_test_util.h"
#include "tests/kernels/conv_kernel_test_util.h"
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

// nan_max in window order (rows outer, columns inner), as ops/pool.cc's generic loop
// folds: a later NaN replaces the maximum, a tie keeps the earlier tap.
std::vector<float> window_order(const PoolShape& s, int64_t planes, const std::vector<float>& x) {
  std::vector<float> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < s.out_h; ++oy)
      for (int64_t ox = 0; ox < s.out_w; ++ox) {
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t ki = 0; ki < s.win.kh; ++ki)
          for (int64_t kj = 0; kj < s.win.kw; ++kj) {
            const int64_t iy = oy * s.win.sh - s.win.pad_top + ki * s.win.dh;
            const int64_t ix = ox * s.win.sw - s.win.pad_left + kj;
            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
            const float v = x[(p * s.h + iy) * s.w + ix];
            if (m < v || std::isnan(v)) m = v;
          }
        y.push_back(m);
      }
  return y;
}

uint32_t bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

float from_bits(uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// The sum from +0 of the taps inside the input in window order, in float, divided by the
// float product of the window's rows and columns that count (inside the input, or with
// count_include_pad inside the input and its explicit padding): ops/pool.cc's generic
// loop's bits.
std::vector<float> window_order_mean(const PoolShape& s, int64_t planes, const std::vector<float>& x,
                                     bool count_include_pad) {
  const Window2d& w = s.win;
  const auto counts = [&](int64_t at, int64_t step, int64_t k, int64_t d, int64_t pad_begin, int64_t pad_end,
                          int64_t size) {
    int64_t n = 0;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t pos = at * step - pad_begin + i * d;
      n += count_include_pad ? pos >= -pad_begin && pos < size + pad_end : pos >= 0 && pos < size;
    }
    return static_cast<float>(n);
  };
  std::vector<float> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < s.out_h; ++oy)
      for (int64_t ox = 0; ox < s.out_w; ++ox) {
        float sum = 0.0f;
        for (int64_t ki = 0; ki < w.kh; ++ki)
          for (int64_t kj = 0; kj < w.kw; ++kj) {
            const int64_t iy = oy * w.sh - w.pad_top + ki * w.dh, ix = ox * w.sw - w.pad_left + kj;
            if (iy >= 0 && iy < s.h && ix >= 0 && ix < s.w) sum += x[(p * s.h + iy) * s.w + ix];
          }
        y.push_back(sum / (counts(oy, w.sh, w.kh, w.dh, w.pad_top, w.pad_bottom, s.h) *
                           counts(ox, w.sw, w.kw, 1, w.pad_left, w.pad_right, s.w)));
      }
  return y;
}

// got and want bit for bit (the first few differences).
void expect_bits(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  int wrong = 0;
  for (size_t i = 0; i < got.size() && wrong < 5; ++i)
    if (bits(got[i]) != bits(want[i])) {
      ADD_FAILURE() << "output " << i << ": 0x" << std::hex << bits(got[i]) << " want 0x" << bits(want[i]);
      ++wrong;
    }
}

// Output widths around the vector widths, strides 1 and 2, padding, ceil_mode overhang,
// vertical stride and dilation, padding on one side, windows all in the padding.
std::vector<PoolShape> varied_shapes() {
  std::vector<PoolShape> shapes;
  for (int64_t w : {1, 5, 14, 17, 33, 56})
    for (bool ceil : {false, true}) {
      shapes.push_back(shape(w, w, 3, 2, 2, 1, 0, ceil));  // ResNet/GoogLeNet/SqueezeNet's 3x3/2
      shapes.push_back(shape(w, w, 3, 1, 1, 1, 1, ceil));  // GoogLeNet's 3x3/1 in each inception
      shapes.push_back(shape(w, w, 2, 2, 2, 1, 0, ceil));  // VGG's 2x2/2
      shapes.push_back(shape(w, w, 5, 1, 2, 1, 2, ceil));  // a 5x5 with padding, stride 2 across
      shapes.push_back(shape(w, w, 3, 3, 1, 2, 1, ceil));  // vertical stride 3 and dilation 2
    }
  // Padding on one side only (ONNX pads may differ per side): the row and column reach
  // of the taps is not centred, and out_h is not h.
  for (int64_t w : {6, 13, 30}) {
    PoolShape s = shape(w + 1, w, 3, 1, 1, 1, 0, false);
    s.win.pad_left = 2;
    s.win.pad_top = 1;
    s.out_w = w;
    s.out_h = w;
    shapes.push_back(s);
  }
  // Padding as tall as the window above and below: whole windows in the padding, -inf.
  for (int64_t sh : {1, 2}) {
    PoolShape s = shape(9, 14, 2, sh, sh, 1, 0, false);
    s.win.pad_top = 2;
    s.win.pad_bottom = 2;
    s.out_h = out_size(9, 2, sh, 1, 2, 2, false);
    shapes.push_back(s);
  }
  return shapes;
}

TEST(Pool2dKernel, MatchesADirectLoop) {
  const int64_t planes = 5;
  for (Isa isa : isas_under_test())
    for (const PoolShape& s : varied_shapes()) {
      if (isa == Isa::kScalar) continue;  // the generic loop, tested through the op
      if (s.out_h < 1 || s.out_w < 1) continue;
      SCOPED_TRACE(testing::Message() << isa_name(isa) << " " << s.h << "x" << s.w << " k" << s.win.kh << " s"
                                      << s.win.sh << "x" << s.win.sw << " d" << s.win.dh << " p" << s.win.pad_top
                                      << " out " << s.out_h << "x" << s.out_w);
      const kernels::Pool2dKernel* k = kernels::find_pool2d_kernel(s, isa);
      ASSERT_NE(k, nullptr);
      std::vector<float> x = random_values(planes * s.h * s.w, static_cast<uint32_t>(s.w * 7 + s.win.kh), -4, 4);
      x[x.size() / 3] = std::numeric_limits<float>::quiet_NaN();
      x[x.size() / 2] = -std::numeric_limits<float>::infinity();
      for (int threads : {1, 2}) {
        std::vector<float> y(planes * s.out_h * s.out_w, 99.0f);
        const KeptScratch kept(threads, kernels::pool2d_thread_floats(*k, s));
        kernels::max_pool2d(*k, s, planes, x.data(), y.data(), kept.own, threads);
        expect_bits(y, window_order(s, planes, x));
      }
    }
}

// Planes of GoogLeNet's and ResNet's sizes and odd ones, plane counts that are no
// multiple of a vector, windows 2 to 5 with padding, ceil_mode and vertical dilation;
// inputs made of ties (+0 and -0, 1 and -inf) and NaNs of two payloads, so which tap
// wins shows in the bits: each must be the window-order fold's, with one and two threads.
TEST(Pool2dKernel, BitsAreTheWindowOrderFolds) {
  std::vector<PoolShape> shapes;
  for (int64_t w : {7, 14, 56, 9, 13}) {
    const int64_t h = w == 9 ? 11 : w;
    for (bool ceil : {false, true}) {
      shapes.push_back(shape(h, w, 3, 2, 2, 1, 0, ceil));
      shapes.push_back(shape(h, w, 3, 1, 1, 1, 1, ceil));
      shapes.push_back(shape(h, w, 2, 2, 2, 1, 0, ceil));
      shapes.push_back(shape(h, w, 2, 1, 1, 1, 1, ceil));
      shapes.push_back(shape(h, w, 5, 1, 1, 1, 2, ceil));
      shapes.push_back(shape(h, w, 5, 2, 2, 1, 2, ceil));
      shapes.push_back(shape(h, w, 3, 2, 1, 2, 1, ceil));  // vertical dilation 2
    }
  }
  shapes.push_back(shape(112, 112, 3, 2, 2, 1, 1, false));  // ResNet's stem pool
  const uint32_t kNanA = 0x7fc00001, kNanB = 0xffc12345;    // quiet NaNs, payloads and signs apart
  const float kInf = std::numeric_limits<float>::infinity();
  for (int64_t planes : {3, 19})
    for (Isa isa : isas_under_test()) {
      if (isa == Isa::kScalar) continue;  // the generic loop, tested through the op
      for (const PoolShape& s : shapes) {
        if (s.out_h < 1 || s.out_w < 1 || (planes == 19 && s.h == 112)) continue;
        SCOPED_TRACE(testing::Message() << isa_name(isa) << " " << planes << "x" << s.h << "x" << s.w << " k"
                                        << s.win.kh << " s" << s.win.sh << "x" << s.win.sw << " d" << s.win.dh << " p"
                                        << s.win.pad_top << " out " << s.out_h << "x" << s.out_w);
        const kernels::Pool2dKernel* k = kernels::find_pool2d_kernel(s, isa);
        ASSERT_NE(k, nullptr);
        // Mostly zeros of both signs, some -inf, few ones, NaNs rare enough that many
        // windows have none.
        std::vector<float> x = random_values(planes * s.h * s.w, static_cast<uint32_t>(s.w * 31 + s.win.kw), 0, 1);
        for (size_t i = 0; i < x.size(); ++i) {
          const float r = x[i];
          x[i] = r < 0.02f   ? from_bits(i % 2 ? kNanA : kNanB)
                 : r < 0.07f ? 1.0f
                 : r < 0.2f  ? -kInf
                 : r < 0.6f  ? 0.0f
                             : -0.0f;
        }
        // The last plane without a NaN at all.
        const int64_t plane = s.h * s.w;
        for (int64_t i = (planes - 1) * plane; i < planes * plane; ++i)
          if (std::isnan(x[i])) x[i] = -0.0f;
        const std::vector<float> want = window_order(s, planes, x);
        for (int threads : {1, 2}) {
          std::vector<float> y(planes * s.out_h * s.out_w, 99.0f);
          const KeptScratch kept(threads, kernels::pool2d_thread_floats(*k, s));
          kernels::max_pool2d(*k, s, planes, x.data(), y.data(), kept.own, threads);
          SCOPED_TRACE(testing::Message() << threads << " threads");
          expect_bits(y, want);
        }
      }
    }
}

// Stride 1 both ways with the input's width out, rows narrower than two vectors, and on
// AVX-512 stride 2 with half the input's width out, narrower than a vector: pooled flat,
// across rows (the tests above check its bits); other planes not.
TEST(Pool2dKernel, NarrowPlanesArePooledFlat) {
  for (Isa isa : isas_under_test()) {
    if (isa == Isa::kScalar) continue;
    SCOPED_TRACE(isa_name(isa));
    const PoolShape narrow = shape(14, 14, 3, 1, 1, 1, 1, true);
    const kernels::Pool2dKernel* k = kernels::find_pool2d_kernel(narrow, isa);
    ASSERT_NE(k, nullptr);
    const int64_t lanes = k->lanes;
    EXPECT_TRUE(kernels::pool2d_layout(*k, narrow).flat);
    EXPECT_TRUE(kernels::pool2d_layout(*k, shape(9, 2 * lanes - 1, 5, 1, 1, 1, 2, false)).flat);
    EXPECT_FALSE(kernels::pool2d_layout(*k, shape(9, 2 * lanes, 3, 1, 1, 1, 1, false)).flat);  // wide rows
    EXPECT_FALSE(kernels::pool2d_layout(*k, shape(14, 14, 3, 1, 1, 1, 0, false)).flat);        // out_w < w
    const PoolShape strided = shape(14, 14, 3, 2, 2, 1, 1, false), odd = shape(13, 13, 3, 2, 2, 1, 0, true);
    const kernels::Pool2dKernel* k2 = kernels::find_pool2d_kernel(strided, isa);
    EXPECT_EQ(kernels::pool2d_layout(*k2, strided).flat, isa == Isa::kAvx512);
    EXPECT_FALSE(kernels::pool2d_layout(*k2, odd).flat);                                        // 13 columns in, 6 out
    EXPECT_FALSE(kernels::pool2d_layout(*k2, shape(9, 2 * lanes, 3, 2, 2, 1, 1, false)).flat);  // wide rows
  }
}

// The flat path watches for NaNs in one tap's loads only: a single NaN at any place of a
// narrow plane (plane i has it at float i) must still reach every window holding it.
TEST(Pool2dKernel, ANaNAnywhereInANarrowPlaneIsKept) {
  for (Isa isa : isas_under_test()) {
    if (isa == Isa::kScalar) continue;
    for (const PoolShape& s : {shape(7, 7, 3, 1, 1, 1, 1, false), shape(14, 14, 5, 1, 1, 1, 2, false),
                               shape(14, 14, 3, 2, 2, 1, 1, false), shape(14, 14, 2, 2, 2, 1, 0, true)}) {
      SCOPED_TRACE(testing::Message() << isa_name(isa) << " " << s.h << "x" << s.w << " k" << s.win.kh << " s"
                                      << s.win.sh);
      const kernels::Pool2dKernel* k = kernels::find_pool2d_kernel(s, isa);
      ASSERT_NE(k, nullptr);
      const int64_t plane = s.h * s.w, planes = plane;
      std::vector<float> x = random_values(planes * plane, 5, -4, 4);
      for (int64_t i = 0; i < planes; ++i) x[i * plane + i] = std::numeric_limits<float>::quiet_NaN();
      std::vector<float> y(planes * s.out_h * s.out_w, 99.0f);
      const KeptScratch kept(1, kernels::pool2d_thread_floats(*k, s));
      kernels::max_pool2d(*k, s, planes, x.data(), y.data(), kept.own, 1);
      expect_bits(y, window_order(s, planes, x));
    }
  }
}

// The average pool, with and without count_include_pad, against the window-order sum:
// NaN, infinities of both signs and zeros of both signs among the values.
TEST(Pool2dKernel, AveragesAreTheWindowOrderSums) {
  std::vector<PoolShape> shapes = varied_shapes();
  shapes.push_back(shape(56, 56, 2, 2, 2, 1, 0, false));  // DenseNet's transition pools
  shapes.push_back(shape(17, 17, 3, 1, 1, 1, 1, false));  // Inception-v3's
  const int64_t planes = 5;
  for (Isa isa : isas_under_test())
    for (const PoolShape& s : shapes)
      for (bool count_include_pad : {false, true}) {
        if (isa == Isa::kScalar) continue;  // the generic loop, tested through the op
        if (s.out_h < 1 || s.out_w < 1) continue;
        SCOPED_TRACE(testing::Message() << isa_name(isa) << " " << s.h << "x" << s.w << " k" << s.win.kh << " s"
                                        << s.win.sh << "x" << s.win.sw << " d" << s.win.dh << " p" << s.win.pad_top
                                        << " out " << s.out_h << "x" << s.out_w << " include_pad "
                                        << count_include_pad);
        const kernels::Pool2dKernel* k = kernels::find_pool2d_kernel(s, isa);
        ASSERT_NE(k, nullptr);
        std::vector<float> x = random_values(planes * s.h * s.w, static_cast<uint32_t>(s.w * 5 + s.win.kh), -4, 4);
        const float kInf = std::numeric_limits<float>::infinity();
        for (size_t i = 0; i < x.size(); i += 7) x[i] = i % 3 ? -0.0f : 0.0f;
        x[x.size() / 3] = std::numeric_limits<float>::quiet_NaN();
        x[x.size() / 2] = -kInf;
        x[x.size() / 4] = kInf;
        const std::vector<float> want = window_order_mean(s, planes, x, count_include_pad);
        for (int threads : {1, 2}) {
          std::vector<float> y(planes * s.out_h * s.out_w, 99.0f);
          const KeptScratch kept(threads, kernels::pool2d_thread_floats(*k, s));
          kernels::average_pool2d(*k, s, count_include_pad, planes, x.data(), y.data(), kept.own, threads);
          expect_bits(y, want);
        }
      }
}

TEST(Pool2dKernel, OtherShapesRunTheGenericLoop) {
  for (Isa isa : isas_under_test()) {
    SCOPED_TRACE(isa_name(isa));
    EXPECT_EQ(kernels::find_pool2d_kernel(shape(9, 9, 3, 3, 3, 1, 0, false), isa), nullptr);  // stride 3
    PoolShape dilated = shape(9, 9, 3, 1, 1, 1, 0, false);
    dilated.win.dw = 2;
    EXPECT_EQ(kernels::find_pool2d_kernel(dilated, isa), nullptr);
    EXPECT_EQ(kernels::find_pool2d_kernel(shape(40, 40, 17, 1, 1, 1, 0, false), isa), nullptr);  // wide
    EXPECT_EQ(kernels::find_pool2d_kernel(shape(40, 40, 16, 1, 1, 1, 0, false), isa) != nullptr, isa != Isa::kScalar);
  }
}

}  // namespace
}  // namespace minfer::test
