// Pooling against direct loops written here; FLOPs = output elements x window.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/blocked_layout.h"
#include "profiler/isa.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

struct PoolCase {
  int64_t n, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr;
  bool ceil_mode, count_include_pad;
};

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe, bool ceil_mode) {
  const double v = double(in + pb + pe - k) / double(s);
  int64_t o = (ceil_mode ? int64_t(std::ceil(v)) : int64_t(std::floor(v))) + 1;
  if (ceil_mode && (o - 1) * s >= in + pb) --o;  // PyTorch's rule: no window starting in the end padding
  return o;
}

// max_pool = true: max over the in-bounds window; false: average, the divisor being
// in-bounds elements, or (count_include_pad) elements inside input + explicit pads.
std::vector<float> naive_pool(const PoolCase& p, const std::vector<float>& x, bool max_pool, int64_t oh, int64_t ow) {
  std::vector<float> y;
  for (int64_t plane = 0; plane < p.n * p.c; ++plane)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        double acc = max_pool ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t inside = 0, padded = 0;
        for (int64_t ky = 0; ky < p.kh; ++ky)
          for (int64_t kx = 0; kx < p.kw; ++kx) {
            const int64_t iy = oy * p.sh - p.pt + ky, ix = ox * p.sw - p.pl + kx;
            if (iy < p.h + p.pb && ix < p.w + p.pr) ++padded;
            if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
            const double v = x[(plane * p.h + iy) * p.w + ix];
            acc = max_pool ? std::max(acc, v) : acc + v;
            ++inside;
          }
        if (!max_pool) acc /= double(p.count_include_pad ? padded : inside);
        y.push_back(static_cast<float>(acc));
      }
  return y;
}

void PrintTo(const PoolCase& p, std::ostream* os) {
  *os << p.n << "x" << p.c << "x" << p.h << "x" << p.w << "_k" << p.kh << "x" << p.kw << "_s" << p.sh << "x" << p.sw
      << "_p" << p.pt << p.pl << p.pb << p.pr << (p.ceil_mode ? "_ceil" : "") << (p.count_include_pad ? "_incpad" : "");
}

class PoolTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolTest, MaxAndAverageMatchDirectLoops) {
  const PoolCase p = GetParam();
  const int64_t oh = out_size(p.h, p.kh, p.sh, p.pt, p.pb, p.ceil_mode);
  const int64_t ow = out_size(p.w, p.kw, p.sw, p.pl, p.pr, p.ceil_mode);
  auto x = random_values(p.n * p.c * p.h * p.w, 11);
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{p.kh, p.kw});
  a.set("strides", std::vector<int64_t>{p.sh, p.sw});
  a.set("pads", std::vector<int64_t>{p.pt, p.pl, p.pb, p.pr});
  a.set("ceil_mode", int64_t{p.ceil_mode});
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    OpResult mx = run_op("MaxPool", {input({p.n, p.c, p.h, p.w}, x)}, a, 1, threads);
    ASSERT_EQ(mx.shapes[0], (Shape{p.n, p.c, oh, ow}));
    EXPECT_EQ(mx.outputs[0], naive_pool(p, x, true, oh, ow));
    EXPECT_EQ(mx.cost.flops, p.n * p.c * oh * ow * p.kh * p.kw);
    Attributes average = a;
    average.set("count_include_pad", int64_t{p.count_include_pad});
    OpResult av = run_op("AveragePool", {input({p.n, p.c, p.h, p.w}, x)}, average, 1, threads);
    EXPECT_LT(max_rel_error(av.outputs[0], naive_pool(p, x, false, oh, ow)), 1e-6);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, PoolTest,
                         ::testing::Values(PoolCase{1, 2, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, false, false},
                                           PoolCase{2, 3, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, false, false},
                                           PoolCase{1, 2, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, false, true},
                                           PoolCase{1, 1, 6, 6, 3, 3, 2, 2, 0, 0, 0, 0, true, false},
                                           PoolCase{1, 2, 5, 8, 2, 3, 1, 2, 0, 1, 1, 0, true, true},
                                           PoolCase{1, 1, 9, 9, 3, 3, 3, 3, 1, 1, 1, 1, true, true},
                                           // Enough work for two threads; window wider than the stride.
                                           PoolCase{2, 32, 30, 31, 3, 3, 2, 2, 1, 1, 1, 1, false, false},
                                           PoolCase{1, 3, 4, 4, 5, 5, 1, 1, 2, 2, 2, 2, false, true},
                                           // Ceil mode: one window longer than the input (PyTorch's
                                           // MaxPool2d(3, 3, ceil_mode=True) on 2x2 gives 1x1).
                                           PoolCase{1, 2, 2, 2, 3, 3, 3, 3, 0, 0, 0, 0, true, false},
                                           PoolCase{1, 2, 3, 2, 4, 3, 3, 2, 1, 0, 0, 0, true, true}));

TEST(PoolCost, SeedMaxPoolExample) {
  // Seed 003: 2x2/2 max-pool on 112x112x128 = 1,605,632 FLOPs.
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{2, 2});
  a.set("strides", std::vector<int64_t>{2, 2});
  OpResult r = cost_of("MaxPool", {input({1, 128, 112, 112}, {})}, a);
  EXPECT_EQ(r.cost.flops, 1'605'632);
  EXPECT_EQ(r.cost.macs, 0);
}

TEST(GlobalPool, AverageAndMax) {
  auto x = random_values(2 * 3 * 4 * 5, 12);
  OpResult avg = run_op("GlobalAveragePool", {input({2, 3, 4, 5}, x)});
  OpResult mx = run_op("GlobalMaxPool", {input({2, 3, 4, 5}, x)});
  ASSERT_EQ(avg.shapes[0], (Shape{2, 3, 1, 1}));
  for (int64_t p = 0; p < 6; ++p) {
    double sum = 0, best = -1e9;
    for (int64_t i = 0; i < 20; ++i) {
      sum += x[p * 20 + i];
      best = std::max(best, double(x[p * 20 + i]));
    }
    EXPECT_NEAR(avg.outputs[0][p], sum / 20, 1e-6);
    EXPECT_EQ(mx.outputs[0][p], float(best));
  }
  EXPECT_EQ(avg.cost.flops, 2 * 3 * 4 * 5);
}

TEST(Pool, RejectsBadWindows) {
  Attributes no_kernel;
  EXPECT_THROW(compile(single_op_graph("MaxPool", {input({1, 1, 4, 4}, {})}, no_kernel)), ModelError);
  Attributes big;
  big.set("kernel_shape", std::vector<int64_t>{5, 5});
  EXPECT_THROW(compile(single_op_graph("MaxPool", {input({1, 1, 4, 4}, {})}, big)), ModelError);
  // In ceil mode too, unless the window can start inside the input (stride > overhang).
  big.set("ceil_mode", int64_t{1});
  EXPECT_EQ(compile_error("MaxPool", {input({1, 1, 4, 4}, {})}, big),
            "<test>: node 'node' (MaxPool): kernel extent 5 is larger than the padded input 4");
  big.set("strides", std::vector<int64_t>{2, 2});
  EXPECT_NO_THROW(compile(single_op_graph("MaxPool", {input({1, 1, 4, 4}, {})}, big)));
}

TEST(Pool, WindowsPast32BitsAreRefused) {
  Attributes huge;
  huge.set("kernel_shape", std::vector<int64_t>{2, int64_t{1} << 40});
  EXPECT_EQ(compile_error("MaxPool", {input({1, 1, 4, 4}, {})}, huge),
            "<test>: node 'node' (MaxPool): attribute 'kernel_shape' value 1099511627776 is out of range (at most "
            "2147483647)");
}

TEST(Pool, AWindowFarWiderThanItsInputCostsOnlyTheTapsThatLand) {
  // A 1 x (2^31 - 1) window over one pixel, padded to fit: the taps are counted in closed
  // form (looping over them took about 20 s).
  for (const char* op : {"AveragePool", "MaxPool"}) {
    Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{1, 2147483647});
    a.set("pads", std::vector<int64_t>{0, 2147483646, 0, 0});
    if (std::string(op) == "AveragePool") a.set("count_include_pad", int64_t{1});
    const OpResult r = run_op(op, {input({1, 1, 1, 1}, {3.0f})}, a);
    EXPECT_EQ(r.shapes[0], (Shape{1, 1, 1, 1}));
    EXPECT_FLOAT_EQ(r.outputs[0][0], std::string(op) == "MaxPool" ? 3.0f : 3.0f / 2147483647.0f);
  }
}

}  // namespace
}  // namespace minfer::test

namespace minfer::test {
namespace {

// MaxPool and AveragePool (with and without count_include_pad) on an NCHWc input (the
// blocked_layout pass's attributes) give the NCHW pool's values in NCHWc, bit for bit,
// NaNs where they are, for strides, dilation, padding and ceil_mode, rows of several groups
// of four windows inside and a tail; 1 and 2 threads alike.
TEST(Pool, PoolsInNchwcMatchNchw) {
  const int64_t c = blocked_lanes(active_isa());
  if (!c) GTEST_SKIP() << "no NCHWc kernels on the scalar target";
  struct Case {
    int64_t h, w, k, stride, dilation, pad;
    bool ceil;
  };
  const std::vector<Case> cases = {{9, 11, 3, 1, 1, 1, false},  {13, 13, 3, 2, 1, 0, true}, {12, 9, 2, 2, 1, 0, false},
                                   {10, 14, 3, 2, 2, 1, false}, {7, 7, 5, 1, 1, 2, false},  {27, 27, 3, 2, 1, 0, true},
                                   {8, 8, 3, 2, 1, 1, true},    {5, 30, 3, 1, 1, 1, false}, {6, 37, 3, 2, 2, 1, true},
                                   {4, 23, 2, 1, 1, 0, false}};
  struct Pool {
    const char* op;
    int64_t count_include_pad;
  };
  uint32_t seed = 1;
  for (const Pool& pool : {Pool{"MaxPool", 0}, Pool{"AveragePool", 0}, Pool{"AveragePool", 1}})
    for (const Case& k : cases) {
      const int64_t n = 2, channels = 2 * c;
      std::vector<float> x = random_values(n * channels * k.h * k.w, seed++);
      x[5] = x[x.size() / 3] = std::numeric_limits<float>::quiet_NaN();
      Attributes a;
      a.set("kernel_shape", std::vector<int64_t>{k.k, k.k});
      a.set("strides", std::vector<int64_t>{k.stride, k.stride});
      a.set("dilations", std::vector<int64_t>{k.dilation, k.dilation});
      a.set("pads", std::vector<int64_t>{k.pad, k.pad, k.pad, k.pad});
      a.set("ceil_mode", int64_t{k.ceil});
      if (std::string(pool.op) == "AveragePool") a.set("count_include_pad", pool.count_include_pad);
      const OpResult nchw = run_op(pool.op, {input({n, channels, k.h, k.w}, x)}, a);
      const Shape& ys = nchw.shapes[0];
      Attributes b = a;
      b.set("blocked_input", c);
      b.set("blocked_output", c);
      for (int threads : {1, 2}) {
        const OpResult r =
            run_op(pool.op, {input({n, channels / c, k.h, k.w, c}, reorder_nchwc(x, n, channels, k.h * k.w, c, true))},
                   b, 1, threads);
        ASSERT_EQ(r.shapes[0], (Shape{n, channels / c, ys[2], ys[3], c}));
        const std::vector<float> want = reorder_nchwc(nchw.outputs[0], n, channels, ys[2] * ys[3], c, true);
        ASSERT_EQ(r.outputs[0].size(), want.size());
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_TRUE(r.outputs[0][i] == want[i] || (std::isnan(r.outputs[0][i]) && std::isnan(want[i])))
              << pool.op << " count_include_pad " << pool.count_include_pad << " element " << i << " case " << k.h
              << "x" << k.w << " k" << k.k << " s" << k.stride << " d" << k.dilation << " p" << k.pad;
        EXPECT_EQ(r.cost.flops, nchw.cost.flops);
        EXPECT_EQ(r.kind, nchw.kind);
      }
    }
}

// GlobalAveragePool and GlobalMaxPool on an NCHWc input give the NCHW pools' values as
// NCHW [N, C, 1, 1]: the maxima bit for bit (NaNs kept), the means summed in double.
TEST(GlobalPool, NchwcInputMatchesNchw) {
  const int64_t c = blocked_lanes(active_isa());
  if (!c) GTEST_SKIP() << "no NCHWc kernels on the scalar target";
  const int64_t n = 2, channels = 3 * c, h = 7, w = 9;
  std::vector<float> x = random_values(n * channels * h * w, 21);
  x[11] = std::numeric_limits<float>::quiet_NaN();
  Attributes blocked;
  blocked.set("blocked_input", c);
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"})
    for (int threads : {1, 2}) {
      const OpResult nchw = run_op(op, {input({n, channels, h, w}, x)}, {}, 1, threads);
      const OpResult r = run_op(op, {input({n, channels / c, h, w, c}, reorder_nchwc(x, n, channels, h * w, c, true))},
                                blocked, 1, threads);
      ASSERT_EQ(r.shapes[0], (Shape{n, channels, 1, 1})) << op;
      for (size_t i = 0; i < r.outputs[0].size(); ++i) {
        const float got = r.outputs[0][i], want = nchw.outputs[0][i];
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got)) << op << " channel " << i;
        } else if (std::string(op) == "GlobalMaxPool") {
          EXPECT_EQ(got, want) << op << " channel " << i;
        } else {
          EXPECT_NEAR(got, want, 1e-6f * (1.0f + std::fabs(want))) << op << " channel " << i;
        }
      }
      EXPECT_EQ(r.cost.flops, nchw.cost.flops);
    }
}

}  // namespace
}  // namespace minfer::test
