// Conv against a direct 7-loop convolution written here, and its cost by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "ops/blocked_layout.h"
#include "profiler/isa.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

struct ConvCase {
  int64_t n, cin, h, w, cout, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, group;
  bool bias;
  const char* kernel;  // the kernel Conv must choose for this case on the scalar target
};

// The kernel Conv must choose on the target the test runs: on AVX2 and AVX-512 the direct
// SIMD kernel replaces im2col + GEMM for windows larger than 1x1 with one group and fewer
// output channels than a vector's lanes (strides within the window), and the blocked
// direct convolution for the other windows larger than 1x1 with constant weights and one
// group (strided ones too), or groups whose output channels fill at least half of their
// own 8- or 16-channel blocks (no case here merges neighbouring groups), by Winograd F(2x2, 3x3) for 3x3 stride-1
// windows over whole input blocks where it multiplies at most 0.6x as often (the cases here pad to the same size; none
// with groups runs it); the direct pointwise kernel replaces the pointwise GEMM for unpadded 1x1 convolutions with one
// group, K within the GEMM's K block on AVX2 (256; any K on AVX-512) and three tiles of pixels on AVX-512 (3 vectors
// each: 144), four on AVX2 (96).
std::string expected_kernel(const ConvCase& c) {
  const bool avx512 = active_isa() == Isa::kAvx512;
  const int64_t out_pixels = ((c.h - 1) / c.sh + 1) * ((c.w - 1) / c.sw + 1);
  if (std::string(c.kernel) == "pointwise_gemm" && active_isa() != Isa::kScalar && c.group == 1 &&
      (avx512 || c.cin <= 256) && out_pixels >= (avx512 ? 144 : 96))
    return "pointwise_direct";
  const int64_t lanes = avx512 ? 16 : 8, cout_g = c.cout / c.group;
  if (std::string(c.kernel) == "im2col_gemm" && active_isa() != Isa::kScalar && c.group == 1 && c.kh * c.kw > 1 &&
      c.cout < lanes && c.sh <= (c.kh - 1) * c.dh + 1 && c.sw <= (c.kw - 1) * c.dw + 1)
    return "direct_simd";
  const bool winograd = c.group == 1 && c.kh == 3 && c.kw == 3 && c.sh == 1 && c.sw == 1 && c.dh == 1 && c.dw == 1 &&
                        c.cin % lanes == 0 &&
                        16 * ((c.h + 1) / 2) * ((c.w + 1) / 2) * 10 <= 9 * c.h * c.w * 6;  // same padding
  const bool blocked_groups = c.group == 1 || (cout_g + lanes - 1) / lanes * lanes <= 2 * cout_g;
  if (std::string(c.kernel) == "im2col_gemm" && blocked_groups && c.kh * c.kw > 1 && active_isa() != Isa::kScalar)
    return winograd ? "blocked_winograd" : "blocked_direct";
  return c.kernel;
}

// Direct definition: y[n,oc,oy,ox] = b[oc] + sum over the group's input channels and
// the kernel window of x * w, with zero padding.
std::vector<float> naive_conv(const ConvCase& c, const std::vector<float>& x, const std::vector<float>& wt,
                              const std::vector<float>& b, int64_t oh, int64_t ow) {
  std::vector<float> y(c.n * c.cout * oh * ow, 0.0f);
  const int64_t cig = c.cin / c.group, cog = c.cout / c.group;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t oc = 0; oc < c.cout; ++oc)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = c.bias ? b[oc] : 0.0;
          const int64_t g = oc / cog;
          for (int64_t ic = 0; ic < cig; ++ic)
            for (int64_t ky = 0; ky < c.kh; ++ky)
              for (int64_t kx = 0; kx < c.kw; ++kx) {
                const int64_t iy = oy * c.sh - c.pt + ky * c.dh, ix = ox * c.sw - c.pl + kx * c.dw;
                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                acc += double(x[((n * c.cin + g * cig + ic) * c.h + iy) * c.w + ix]) *
                       wt[((oc * cig + ic) * c.kh + ky) * c.kw + kx];
              }
          y[((n * c.cout + oc) * oh + oy) * ow + ox] = static_cast<float>(acc);
        }
  return y;
}

// The Conv node's attributes for c.
Attributes conv_attributes(const ConvCase& c) {
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{c.kh, c.kw});
  a.set("strides", std::vector<int64_t>{c.sh, c.sw});
  a.set("dilations", std::vector<int64_t>{c.dh, c.dw});
  a.set("pads", std::vector<int64_t>{c.pt, c.pl, c.pb, c.pr});
  a.set("group", c.group);
  return a;
}

void PrintTo(const ConvCase& c, std::ostream* os) {
  *os << c.n << "x" << c.cin << "x" << c.h << "x" << c.w << "_to" << c.cout << "_k" << c.kh << "x" << c.kw << "_s"
      << c.sh << "x" << c.sw << "_d" << c.dh << "x" << c.dw << "_p" << c.pt << c.pl << c.pb << c.pr << "_g" << c.group
      << (c.bias ? "_bias" : "");
}

class ConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvTest, MatchesDirectConvolution) {
  const ConvCase c = GetParam();
  const int64_t oh = (c.h + c.pt + c.pb - ((c.kh - 1) * c.dh + 1)) / c.sh + 1;
  const int64_t ow = (c.w + c.pl + c.pr - ((c.kw - 1) * c.dw + 1)) / c.sw + 1;
  auto x = random_values(c.n * c.cin * c.h * c.w, 1);
  auto wt = random_values(c.cout * (c.cin / c.group) * c.kh * c.kw, 2);
  auto b = random_values(c.cout, 3);
  const Attributes a = conv_attributes(c);
  std::vector<TestTensor> in = {input({c.n, c.cin, c.h, c.w}, x), weight({c.cout, c.cin / c.group, c.kh, c.kw}, wt)};
  if (c.bias) in.push_back(weight({c.cout}, b));
  for (int threads : {1, 2}) {
    OpResult r = run_op("Conv", in, a, 1, threads);
    ASSERT_EQ(r.shapes[0], (Shape{c.n, c.cout, oh, ow}));
    EXPECT_LT(max_rel_error(r.outputs[0], naive_conv(c, x, wt, b, oh, ow)), 1e-5) << "threads " << threads;
    EXPECT_EQ(r.cost.macs, c.n * c.kh * c.kw * (c.cin / c.group) * oh * ow * c.cout);
    EXPECT_EQ(r.details["kernel"], expected_kernel(c));
    if (std::string(c.kernel) == "depthwise_simd") {
      EXPECT_TRUE(r.details["variant"].get<std::string>().starts_with("depthwise_f32_"));
    }
    if (std::string(c.kernel) == "direct_simd") {
      EXPECT_TRUE(r.details["variant"].get<std::string>().starts_with("direct_conv_f32_"));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvTest,
    ::testing::Values(
        ConvCase{1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, "direct_simd"},          // same padding
        ConvCase{2, 4, 9, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, "direct_simd"},          // stride 2, odd sizes
        ConvCase{1, 3, 30, 30, 8, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1, false, "direct_simd"},       // ResNet's first
        ConvCase{1, 5, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, "im2col_gemm"},          // same padding
        ConvCase{2, 6, 9, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, "im2col_gemm"},          // stride 2, odd sizes
        ConvCase{1, 5, 10, 10, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, "pointwise_gemm"},     // pointwise
        ConvCase{3, 8, 3, 11, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, false, "pointwise_gemm"},    // pointwise, batch 3
        ConvCase{2, 6, 7, 5, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, true, "pointwise_gemm"},       // grouped 1x1
        ConvCase{1, 6, 12, 12, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, true, "depthwise_simd"},     // depthwise
        ConvCase{2, 5, 13, 21, 5, 3, 3, 2, 2, 1, 1, 0, 1, 1, 0, 5, false, "depthwise_simd"},    // s2, asymmetric
        ConvCase{3, 7, 9, 11, 7, 5, 5, 1, 1, 1, 1, 2, 1, 3, 4, 7, true, "depthwise_simd"},      // 5x5, batch 3
        ConvCase{1, 9, 20, 19, 9, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 9, true, "depthwise_simd"},     // 5x5 s2
        ConvCase{1, 4, 9, 9, 4, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 4, true, "depthwise_direct"},     // strides 1x2
        ConvCase{1, 4, 11, 11, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4, false, "depthwise_direct"},  // multiplier 2
        ConvCase{2, 3, 10, 9, 9, 5, 5, 2, 1, 2, 1, 3, 2, 1, 0, 3, true, "depthwise_direct"},    // x3, dilated, asym
        ConvCase{1, 4, 5, 5, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 4, true, "depthwise_direct"},     // 1x1, multiplier 2
        ConvCase{1, 4, 1, 12, 8, 1, 3, 1, 2, 1, 1, 0, 1, 0, 1, 4, true, "depthwise_direct"},    // height 1 (1-D)
        ConvCase{1, 8, 9, 9, 4, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 2, true, "im2col_gemm"},          // grouped
        ConvCase{1, 3, 13, 13, 5, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, true, "direct_simd"},        // dilation 2
        ConvCase{1, 6, 13, 13, 5, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, true, "im2col_gemm"},        // dilation 2
        ConvCase{1, 2, 7, 9, 3, 2, 4, 1, 3, 1, 1, 0, 1, 1, 2, 1, false, "direct_simd"},         // asymmetric all
        ConvCase{1, 5, 7, 9, 3, 2, 4, 1, 3, 1, 1, 0, 1, 1, 2, 1, false, "im2col_gemm"},         // asymmetric all
        ConvCase{1, 6, 6, 6, 2, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1, true, "im2col_gemm"},          // 5x5
        ConvCase{1, 5, 4, 4, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, "im2col_gemm"},          // padded 1x1
        ConvCase{1, 5, 5, 5, 4, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, true, "pointwise_gemm"},       // strided 1x1
        ConvCase{1, 3, 5, 5, 4, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, true, "direct_simd"},          // strided 1x1
        ConvCase{2, 13, 17, 19, 37, 3, 3, 3, 3, 1, 1, 1, 2, 0, 1, 1, true, "im2col_gemm"},      // stride 3, odd
        ConvCase{1, 31, 9, 8, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, "im2col_gemm"},       // two k-blocks
        ConvCase{2, 16, 9, 10, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, "im2col_gemm"},       // Winograd on SIMD
        ConvCase{2, 21, 6, 7, 33, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, true, "pointwise_gemm"},     // odd groups
        ConvCase{1, 9, 8, 8, 15, 3, 3, 2, 1, 2, 1, 2, 1, 2, 1, 3, true, "im2col_gemm"},         // grouped, mixed
        ConvCase{2, 24, 9, 11, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, true, "im2col_gemm"}));     // 3 groups of 8

// One case per Conv kernel (and per GEMM orientation), with and without a bias: the
// fused epilogues must run in each.
const ConvCase kOneCasePerKernel[] = {
    {1, 3, 9, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, "direct_simd"},
    {2, 6, 9, 7, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, true, "im2col_gemm"},     // the GEMM everywhere
    {2, 19, 9, 7, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, "im2col_gemm"},  // blocked on SIMD targets
    {2, 16, 9, 7, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, "im2col_gemm"},   // Winograd on SIMD targets
    {1, 8, 5, 6, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, "pointwise_gemm"},
    {2, 13, 9, 11, 17, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, "pointwise_gemm"},   // direct on AVX2
    {2, 13, 14, 15, 17, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, "pointwise_gemm"},  // direct on SIMD
    {1, 40, 4, 5, 48, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, false, "pointwise_gemm"},   // pixels as rows on SIMD
    {1, 260, 6, 6, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, "pointwise_gemm"},   // few pixels
    {2, 6, 12, 12, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, true, "depthwise_simd"},
    {1, 4, 11, 11, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4, true, "depthwise_direct"},
};

// The fuse_activations pass's attributes: every kernel applies the activation in its
// epilogue, the report names it and the FLOPs include it (docs/cost-model.md).
TEST(Conv, FusedActivationRunsInEveryKernel) {
  for (const ConvCase& c : kOneCasePerKernel) {
    SCOPED_TRACE(c.kernel);
    const int64_t oh = (c.h + c.pt + c.pb - c.kh) / c.sh + 1, ow = (c.w + c.pl + c.pr - c.kw) / c.sw + 1;
    auto x = random_values(c.n * c.cin * c.h * c.w, 21);
    auto wt = random_values(c.cout * (c.cin / c.group) * c.kh * c.kw, 22);
    auto b = c.bias ? random_values(c.cout, 23) : std::vector<float>(c.cout, 0.0f);
    Attributes a;
    a.set("strides", std::vector<int64_t>{c.sh, c.sw});
    a.set("pads", std::vector<int64_t>{c.pt, c.pl, c.pb, c.pr});
    a.set("group", c.group);
    a.set("activation", std::string("Clip"));
    a.set("activation.min", -0.25);
    a.set("activation.max", 0.5);
    std::vector<TestTensor> in = {input({c.n, c.cin, c.h, c.w}, x), weight({c.cout, c.cin / c.group, c.kh, c.kw}, wt),
                                  c.bias ? weight({c.cout}, b) : TestTensor{}};
    std::vector<float> expected = naive_conv(c, x, wt, b, oh, ow);
    for (float& v : expected) v = std::min(std::max(v, -0.25f), 0.5f);
    for (int threads : {1, 2}) {
      OpResult r = run_op("Conv", in, a, 1, threads);
      EXPECT_LT(max_rel_error(r.outputs[0], expected), 1e-5) << "threads " << threads;
      EXPECT_EQ(r.details["kernel"], expected_kernel(c));
      EXPECT_EQ(r.details["fused_activation"], "Clip");
      EXPECT_EQ(r.cost.flops, 2 * r.cost.macs + 2 * c.n * c.cout * oh * ow);  // Clip: 2 per element
    }
  }
}

// The exponential activations step several output vectors at once in the epilogues
// (kernels/activation_math.h) and one vector at a time over a row elsewhere: every
// kernel's fused Sigmoid and Swish (alpha 1 and 0.5) give the bits of the same
// convolution unfused followed by the activation op's own pass, and match the formula.
TEST(Conv, FusedExponentialActivationsGiveTheBitsOfTheActivationOp) {
  const ConvCase flat_depthwise{1, 6, 7, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, true, "depthwise_simd"};
  std::vector<ConvCase> cases(std::begin(kOneCasePerKernel), std::end(kOneCasePerKernel));
  cases.push_back(flat_depthwise);  // a 7x7 plane: the flat-plane path on SIMD targets
  const Activation acts[] = {
      {ActivationKind::kSigmoid}, {ActivationKind::kSwish, 1.0f}, {ActivationKind::kSwish, 0.5f}};
  for (const ConvCase& c : cases)
    for (const Activation& act : acts) {
      SCOPED_TRACE(fmt::format("{} {} alpha {}", c.kernel, activation_name(act), act.alpha));
      const int64_t oh = (c.h + c.pt + c.pb - c.kh) / c.sh + 1, ow = (c.w + c.pl + c.pr - c.kw) / c.sw + 1;
      auto x = random_values(c.n * c.cin * c.h * c.w, 41);
      auto wt = random_values(c.cout * (c.cin / c.group) * c.kh * c.kw, 42);
      auto b = c.bias ? random_values(c.cout, 43) : std::vector<float>(c.cout, 0.0f);
      for (float& v : x) v *= 8.0f;  // sums well into both tails of the sigmoid
      Attributes a;
      a.set("strides", std::vector<int64_t>{c.sh, c.sw});
      a.set("pads", std::vector<int64_t>{c.pt, c.pl, c.pb, c.pr});
      a.set("group", c.group);
      std::vector<TestTensor> in = {input({c.n, c.cin, c.h, c.w}, x), weight({c.cout, c.cin / c.group, c.kh, c.kw}, wt),
                                    c.bias ? weight({c.cout}, b) : TestTensor{}};
      std::vector<float> unfused = run_op("Conv", in, a).outputs[0];
      act.apply(unfused.data(), static_cast<int64_t>(unfused.size()));
      std::vector<float> expected = naive_conv(c, x, wt, b, oh, ow);
      const bool swish = act.kind == ActivationKind::kSwish;
      for (float& v : expected) {
        const double sigmoid = 1.0 / (1.0 + std::exp(-(swish ? act.alpha : 1.0) * v));
        v = static_cast<float>(swish ? v * sigmoid : sigmoid);
      }
      Attributes fused = a;
      const Attributes activation = fused_activation_attributes(act);
      for (const auto& [name, value] : activation.all()) fused.set(name, value);
      for (int threads : {1, 2}) {
        OpResult r = run_op("Conv", in, fused, 1, threads);
        EXPECT_EQ(r.details["kernel"], expected_kernel(c));
        EXPECT_EQ(r.outputs[0], unfused) << "threads " << threads;
        // Sums 8 times the other tests' carry 8 times their rounding.
        EXPECT_LT(max_rel_error(r.outputs[0], expected), 8e-5) << "threads " << threads;
      }
    }
}

// The fuse_residual_add pass's fourth input: every kernel sums it before the activation
// (the GEMM and the blocked kernel in their epilogue, the others in a second pass), with
// or without a bias; the FLOPs include the Add's one per element.
TEST(Conv, FusedResidualRunsInEveryKernel) {
  for (const ConvCase& c : kOneCasePerKernel) {
    SCOPED_TRACE(c.kernel);
    const int64_t oh = (c.h + c.pt + c.pb - c.kh) / c.sh + 1, ow = (c.w + c.pl + c.pr - c.kw) / c.sw + 1;
    const int64_t outputs = c.n * c.cout * oh * ow;
    auto x = random_values(c.n * c.cin * c.h * c.w, 31);
    auto wt = random_values(c.cout * (c.cin / c.group) * c.kh * c.kw, 32);
    auto b = random_values(c.cout, 33);
    auto z = random_values(outputs, 34);
    Attributes a;
    a.set("strides", std::vector<int64_t>{c.sh, c.sw});
    a.set("pads", std::vector<int64_t>{c.pt, c.pl, c.pb, c.pr});
    a.set("group", c.group);
    a.set("activation", std::string("Relu"));
    a.set("fused_residual", int64_t{1});
    std::vector<TestTensor> in = {input({c.n, c.cin, c.h, c.w}, x), weight({c.cout, c.cin / c.group, c.kh, c.kw}, wt),
                                  c.bias ? weight({c.cout}, b) : TestTensor{}, input({c.n, c.cout, oh, ow}, z)};
    std::vector<float> expected = naive_conv(c, x, wt, c.bias ? b : std::vector<float>(c.cout, 0.0f), oh, ow);
    for (int64_t i = 0; i < outputs; ++i) expected[i] = std::max(expected[i] + z[i], 0.0f);
    for (int threads : {1, 2}) {
      OpResult r = run_op("Conv", in, a, 1, threads);
      EXPECT_LT(max_rel_error(r.outputs[0], expected), 1e-5) << "threads " << threads;
      EXPECT_EQ(r.details["kernel"], expected_kernel(c));
      EXPECT_TRUE(r.details.contains("fused_residual"));
      EXPECT_EQ(r.cost.flops, 2 * r.cost.macs + 2 * outputs);  // the sum and the Relu: 1 each per element
    }
  }
  // A residual that is not the output's shape is refused, and so is a fourth input without
  // the pass's attribute (ONNX's Conv has three).
  auto x = random_values(1 * 3 * 5 * 5, 35), wt = random_values(4 * 3, 36), z = random_values(4 * 5 * 5, 37);
  Attributes fused;
  fused.set("fused_residual", int64_t{1});
  EXPECT_THROW(
      run_op("Conv", {input({1, 3, 5, 5}, x), weight({4, 3, 1, 1}, wt), TestTensor{}, input({1, 4, 5, 4}, z)}, fused),
      std::exception);
  EXPECT_THROW(run_op("Conv", {input({1, 3, 5, 5}, x), weight({4, 3, 1, 1}, wt), TestTensor{}, input({1, 4, 5, 5}, z)}),
               std::exception);
  EXPECT_THROW(run_op("Conv", {input({1, 3, 5, 5}, x), weight({4, 3, 1, 1}, wt)}, fused), std::exception);
}

// A NaN in the input reaches the outputs it feeds through a fused Relu or Clip in every
// kernel, as the Relu and Clip ops keep it (ONNX's max(NaN, 0) is NaN): the vector max
// and min return their second operand when either is NaN, so an epilogue that put the
// bound second turned a NaN into 0 on the SIMD targets only.
TEST(Conv, FusedReluAndClipKeepANaN) {
  for (const ConvCase& c : kOneCasePerKernel)
    for (const std::string activation : {"Relu", "Clip"}) {
      SCOPED_TRACE(expected_kernel(c) + " " + activation);
      const int64_t oh = (c.h + c.pt + c.pb - c.kh) / c.sh + 1, ow = (c.w + c.pl + c.pr - c.kw) / c.sw + 1;
      auto x = random_values(c.n * c.cin * c.h * c.w, 41);
      x[0] = std::numeric_limits<float>::quiet_NaN();  // image 0, channel 0, the top-left pixel
      auto wt = random_values(c.cout * (c.cin / c.group) * c.kh * c.kw, 42);
      Attributes a;
      a.set("strides", std::vector<int64_t>{c.sh, c.sw});
      a.set("pads", std::vector<int64_t>{c.pt, c.pl, c.pb, c.pr});
      a.set("group", c.group);
      a.set("activation", activation);
      if (activation == "Clip") {
        a.set("activation.min", -0.25);
        a.set("activation.max", 0.5);
      }
      // Which outputs read x[0]: those whose naive sum is NaN.
      const std::vector<float> reach = naive_conv(c, x, wt, std::vector<float>(c.cout, 0.0f), oh, ow);
      OpResult r =
          run_op("Conv", {input({c.n, c.cin, c.h, c.w}, x), weight({c.cout, c.cin / c.group, c.kh, c.kw}, wt)}, a);
      EXPECT_EQ(r.details["kernel"], expected_kernel(c));
      int64_t nans = 0;
      for (size_t i = 0; i < reach.size(); ++i) {
        EXPECT_EQ(std::isnan(r.outputs[0][i]), std::isnan(reach[i])) << "output " << i;
        nans += std::isnan(reach[i]);
      }
      EXPECT_GT(nans, 0);
    }
}

// The fuse_channel_scale pass's fifth input, a factor per image and input channel: every
// kernel convolves x * scale (the pointwise GEMM scales as it packs B, the others a copy
// of the input), with or without a residual; the FLOPs include the Mul's one per input
// element.
TEST(Conv, FusedInputScaleRunsInEveryKernel) {
  for (const ConvCase& c : kOneCasePerKernel)
    for (bool residual : {false, true}) {
      SCOPED_TRACE(expected_kernel(c) + (residual ? " with a residual" : ""));
      const int64_t oh = (c.h + c.pt + c.pb - c.kh) / c.sh + 1, ow = (c.w + c.pl + c.pr - c.kw) / c.sw + 1;
      const int64_t inputs = c.n * c.cin * c.h * c.w, outputs = c.n * c.cout * oh * ow;
      auto x = random_values(inputs, 51);
      auto wt = random_values(c.cout * (c.cin / c.group) * c.kh * c.kw, 52);
      auto b = random_values(c.cout, 53);
      auto scale = random_values(c.n * c.cin, 54, 0.0f, 2.0f);
      auto z = random_values(outputs, 55);
      Attributes a;
      a.set("strides", std::vector<int64_t>{c.sh, c.sw});
      a.set("pads", std::vector<int64_t>{c.pt, c.pl, c.pb, c.pr});
      a.set("group", c.group);
      a.set("fused_input_scale", int64_t{1});
      if (residual) a.set("fused_residual", int64_t{1});
      std::vector<TestTensor> in = {input({c.n, c.cin, c.h, c.w}, x), weight({c.cout, c.cin / c.group, c.kh, c.kw}, wt),
                                    c.bias ? weight({c.cout}, b) : TestTensor{},
                                    residual ? input({c.n, c.cout, oh, ow}, z) : TestTensor{},
                                    input({c.n, c.cin, 1, 1}, scale)};
      std::vector<float> xs = x;
      for (int64_t i = 0; i < inputs; ++i) xs[i] *= scale[i / (c.h * c.w)];
      std::vector<float> expected = naive_conv(c, xs, wt, c.bias ? b : std::vector<float>(c.cout, 0.0f), oh, ow);
      if (residual)
        for (int64_t i = 0; i < outputs; ++i) expected[i] += z[i];
      for (int threads : {1, 2}) {
        OpResult r = run_op("Conv", in, a, 1, threads);
        EXPECT_LT(max_rel_error(r.outputs[0], expected), 1e-5) << "threads " << threads;
        EXPECT_EQ(r.details["kernel"], expected_kernel(c));
        EXPECT_TRUE(r.details.contains("fused_input_scale"));
        EXPECT_EQ(r.cost.flops, 2 * r.cost.macs + inputs + (residual ? outputs : 0));
      }
    }
  // The factor must be there, per image and input channel, and only with the attribute.
  auto x = random_values(2 * 3 * 5 * 5, 56), wt = random_values(4 * 3, 57), f = random_values(2 * 3, 58);
  Attributes scaled;
  scaled.set("fused_input_scale", int64_t{1});
  const TestTensor w = weight({4, 3, 1, 1}, wt);
  EXPECT_NO_THROW(run_op("Conv", {input({2, 3, 5, 5}, x), w, {}, {}, input({2, 3, 1, 1}, f)}, scaled));
  EXPECT_THROW(run_op("Conv", {input({2, 3, 5, 5}, x), w}, scaled), std::exception);
  EXPECT_THROW(run_op("Conv", {input({2, 3, 5, 5}, x), w, {}, {}, input({1, 6, 1, 1}, f)}, scaled), std::exception);
  EXPECT_THROW(run_op("Conv", {input({2, 3, 5, 5}, x), w, {}, {}, input({2, 3, 1, 1}, f)}), std::exception);
}

TEST(Conv, GemmKernelsReportTheirPacking) {
  Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  a.set("group", int64_t{2});  // 4 channels per group: not whole blocks, so im2col on every target
  auto x = random_values(1 * 8 * 6 * 6, 31);
  auto wt = random_values(4 * 4 * 3 * 3, 32);
  OpResult constant = run_op("Conv", {input({1, 8, 6, 6}, x), weight({4, 4, 3, 3}, wt)}, a);
  EXPECT_EQ(constant.details["prepacked"], "weights");
  EXPECT_EQ(constant.details["im2col"], "into the GEMM's B panels");
  EXPECT_TRUE(constant.details["gemm_kernel"].get<std::string>().starts_with("gemm_f32_"));
  EXPECT_FALSE(constant.details.contains("fused_activation"));
  // Weights as a run-time input: packed by each GEMM call, same result.
  OpResult runtime = run_op("Conv", {input({1, 8, 6, 6}, x), input({4, 4, 3, 3}, wt)}, a);
  EXPECT_EQ(runtime.details["prepacked"], "none");
  EXPECT_EQ(runtime.outputs[0], constant.outputs[0]);
}

// A 1x1 convolution on a 7x7 plane computes its 49 pixels as the GEMM's rows on the SIMD
// targets (the vectors run along the output channels), on an 8x8 plane its channels; the
// direct kernel takes a 56x56 plane, not a 4x4 one.
TEST(Conv, PointwiseReportsWhichSideIsTheGemmsRows) {
  auto run = [](int64_t cin, int64_t side) {
    auto x = random_values(1 * cin * side * side, 51);
    auto wt = random_values(64 * cin, 52);
    return run_op("Conv", {input({1, cin, side, side}, x), weight({64, cin, 1, 1}, wt)});
  };
  const OpResult small = run(300, 7), large = run(300, 8);
  EXPECT_EQ(small.details["kernel"], "pointwise_gemm");
  EXPECT_EQ(small.details["gemm_rows"], active_isa() == Isa::kScalar ? "output channels" : "pixels");
  EXPECT_EQ(large.details["gemm_rows"], "output channels");
  const OpResult few = run(32, 4), many = run(32, 56);
  EXPECT_EQ(few.details["kernel"], "pointwise_gemm");
  EXPECT_EQ(many.details["kernel"], active_isa() == Isa::kScalar ? "pointwise_gemm" : "pointwise_direct");
  if (active_isa() != Isa::kScalar) {
    EXPECT_TRUE(many.details["variant"].get<std::string>().starts_with("pointwise_f32_"));
    EXPECT_EQ(many.details["prepacked"], "weights");
  }
}

// The blocked kernel's facts say what its layout costs; weights that are a run-time input
// (it packs them at bind time) keep im2col + GEMM.
TEST(Conv, BlockedKernelReportsItsLayout) {
  if (active_isa() == Isa::kScalar) GTEST_SKIP() << "no blocked kernel for the scalar target";
  const int64_t lanes = active_isa() == Isa::kAvx512 ? 16 : 8;
  Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  a.set("group", int64_t{2});  // 16 channels per group: whole blocks on both targets
  auto x = random_values(1 * 32 * 6 * 5, 41);
  auto wt = random_values(64 * 16 * 3 * 3, 42);
  OpResult constant = run_op("Conv", {input({1, 32, 6, 5}, x), weight({64, 16, 3, 3}, wt)}, a);
  EXPECT_EQ(constant.details["kernel"], "blocked_direct");
  EXPECT_EQ(constant.details["layout"], fmt::format("NCHW{}c", lanes));
  EXPECT_TRUE(constant.details["variant"].get<std::string>().starts_with("blocked_conv_f32_"));
  EXPECT_EQ(constant.details["prepacked"], "weights");
  EXPECT_EQ(constant.details["input_reorder_bytes"], 4 * 32 * (6 + 2) * (5 + 2));  // the zero border
  EXPECT_EQ(constant.details["input_layout"], fmt::format("NCHW{}c", lanes));
  OpResult runtime = run_op("Conv", {input({1, 32, 6, 5}, x), input({64, 16, 3, 3}, wt)}, a);
  EXPECT_EQ(runtime.details["kernel"], "im2col_gemm");
  EXPECT_LT(max_rel_error(runtime.outputs[0], constant.outputs[0]), 1e-5);
  // Six input channels (past the direct kernel's few, fewer than a block): the input copy
  // holds just them, no zero lanes.
  a.set("group", int64_t{1});
  const std::vector<float> x6(x.begin(), x.begin() + 6 * 6 * 5), w6(wt.begin(), wt.begin() + 16 * 6 * 3 * 3);
  OpResult six = run_op("Conv", {input({1, 6, 6, 5}, x6), weight({16, 6, 3, 3}, w6)}, a);
  EXPECT_EQ(six.details["kernel"], "blocked_direct");
  EXPECT_EQ(six.details["input_layout"], "NCHW6c");
  EXPECT_EQ(six.details["input_reorder_bytes"], 4 * 6 * (6 + 2) * (5 + 2));
}

// Two threads that split the output rows each copy the input rows their windows read:
// the rows both read (a 3x3 window's two past the middle) are copied twice, and the
// report counts them.
// Groups narrower than the blocked kernel's lanes run it merged: r = lanes / channels per
// group neighbouring groups as one with zero weights between them, up to 4 (on AVX-512 8
// channels a group merge 2, 4 merge 4, 2 stay on im2col; on AVX2 8 are whole blocks, 4
// merge 2, 2 merge 4); the outputs are the convolution's, on 1 and 2 threads.
TEST(Conv, NarrowGroupsRunTheBlockedKernelMerged) {
  const int64_t lanes = blocked_lanes(active_isa());
  const std::vector<ConvCase> cases = {
      {1, 32, 10, 11, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, true, ""},   // 8 a group
      {2, 32, 13, 12, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8, false, ""},  // 4 a group, strided
      {1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, true, ""},  // 4 a group, Winograd-sized
      {1, 32, 9, 9, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, true, ""},     // 4 in, 8 out a group
      {1, 32, 9, 9, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, true, ""},    // 2 a group
  };
  for (const ConvCase& c : cases) {
    const int64_t oh = (c.h + c.pt + c.pb - c.kh) / c.sh + 1, ow = (c.w + c.pl + c.pr - c.kw) / c.sw + 1;
    const int64_t per_group = c.cin / c.group, out_per_group = c.cout / c.group;
    const int64_t r = lanes && lanes % per_group == 0 ? lanes / per_group : 0;
    const bool whole = lanes && per_group % lanes == 0 && out_per_group % lanes == 0;
    const bool merged = !whole && r > 0 && r <= 4 && c.group % r == 0 && r * out_per_group % lanes == 0;
    auto x = random_values(c.n * c.cin * c.h * c.w, 11), wt = random_values(c.cout * per_group * 9, 12),
         b = random_values(c.cout, 13);
    Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{3, 3});
    a.set("strides", std::vector<int64_t>{c.sh, c.sw});
    a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    a.set("group", c.group);
    std::vector<TestTensor> in = {input({c.n, c.cin, c.h, c.w}, x), weight({c.cout, per_group, 3, 3}, wt)};
    if (c.bias) in.push_back(weight({c.cout}, b));
    for (int threads : {1, 2}) {
      const OpResult r1 = run_op("Conv", in, a, 1, threads);
      SCOPED_TRACE(::testing::PrintToString(c) + " threads " + std::to_string(threads));
      EXPECT_LT(max_rel_error(r1.outputs[0], naive_conv(c, x, wt, b, oh, ow)), 1e-5);
      EXPECT_EQ(r1.cost.macs, c.n * 9 * per_group * oh * ow * c.cout);  // the convolution's, not the merged
      EXPECT_EQ(r1.details["kernel"].get<std::string>().starts_with("blocked_"), whole || merged);
      EXPECT_EQ(r1.details.contains("merged_groups"), merged);
    }
  }
}

TEST(Conv, InputReorderBytesCountEachThreadsCopy) {
  if (active_isa() == Isa::kScalar) GTEST_SKIP() << "no blocked kernel for the scalar target";
  Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  a.set("algorithm", std::string("direct"));
  const auto x = random_values(1 * 32 * 32 * 32, 71), wt = random_values(64 * 32 * 9, 72);
  const OpResult one = run_op("Conv", {input({1, 32, 32, 32}, x), weight({64, 32, 3, 3}, wt)}, a, 1, 1);
  const OpResult two = run_op("Conv", {input({1, 32, 32, 32}, x), weight({64, 32, 3, 3}, wt)}, a, 1, 2);
  ASSERT_EQ(two.details["kernel"], "blocked_direct");
  EXPECT_EQ(one.details["input_reorder_bytes"], 4 * 32 * 34 * 34);
  // Output rows 0-15 read padded rows 0-17, rows 16-31 padded rows 16-33.
  EXPECT_EQ(two.details["input_reorder_bytes"], 4 * 32 * (18 + 18) * 34);
  EXPECT_EQ(one.outputs[0], two.outputs[0]);
}

// The engine attribute "algorithm" picks Winograd or the direct sums for a 3x3 stride-1
// layer the blocked kernel runs: the same MACs, outputs within rounding; Winograd's
// details give the multiplies it runs (16 per 2x2 tile and channel pair).
TEST(Conv, AlgorithmAttributeChoosesWinogradOrDirectSums) {
  const auto x = random_values(1 * 16 * 10 * 9, 61), wt = random_values(32 * 16 * 9, 62);
  std::map<std::string, OpResult> runs;
  for (const std::string algorithm : {"auto", "direct", "winograd"}) {
    Attributes a;
    a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    a.set("algorithm", algorithm);
    runs[algorithm] = run_op("Conv", {input({1, 16, 10, 9}, x), weight({32, 16, 3, 3}, wt)}, a);
  }
  const bool simd = active_isa() != Isa::kScalar;
  EXPECT_EQ(runs["auto"].details["kernel"], simd ? "blocked_winograd" : "im2col_gemm");
  EXPECT_EQ(runs["winograd"].details["kernel"], simd ? "blocked_winograd" : "im2col_gemm");
  EXPECT_EQ(runs["direct"].details["kernel"], simd ? "blocked_direct" : "im2col_gemm");
  if (simd) {
    EXPECT_EQ(runs["auto"].details["multiplies_run"], 5 * 5 * 16 * 16 * 32);
  }
  EXPECT_EQ(runs["auto"].cost.macs, runs["direct"].cost.macs);
  EXPECT_LT(max_rel_error(runs["auto"].outputs[0], runs["direct"].outputs[0]), 1e-5);
  Attributes bad;
  bad.set("algorithm", std::string("fft"));
  EXPECT_THROW(run_op("Conv", {input({1, 16, 10, 9}, x), weight({32, 16, 3, 3}, wt)}, bad), std::exception);
}

// Runs c (random x, weights, bias) on 1 and 2 threads against naive_conv; returns the
// kernel details of the last run.
nlohmann::json run_against_naive(const ConvCase& c, uint32_t seed) {
  const int64_t oh = (c.h + c.pt + c.pb - ((c.kh - 1) * c.dh + 1)) / c.sh + 1;
  const int64_t ow = (c.w + c.pl + c.pr - ((c.kw - 1) * c.dw + 1)) / c.sw + 1;
  const auto x = random_values(c.n * c.cin * c.h * c.w, seed);
  const auto wt = random_values(c.cout * (c.cin / c.group) * c.kh * c.kw, seed + 1);
  const auto b = random_values(c.cout, seed + 2);
  const Attributes a = conv_attributes(c);
  const std::vector<TestTensor> in = {input({c.n, c.cin, c.h, c.w}, x),
                                      weight({c.cout, c.cin / c.group, c.kh, c.kw}, wt), weight({c.cout}, b)};
  nlohmann::json details;
  for (int threads : {1, 2}) {
    const OpResult r = run_op("Conv", in, a, 1, threads);
    EXPECT_EQ(r.shapes[0], (Shape{c.n, c.cout, oh, ow}));
    EXPECT_LT(max_rel_error(r.outputs[0], naive_conv(c, x, wt, b, oh, ow)), 1e-5) << "threads " << threads;
    // The cost is the convolution's, cropped or not (the cost convention).
    EXPECT_EQ(r.cost.macs, c.n * c.kh * c.kw * (c.cin / c.group) * oh * ow * c.cout);
    details = r.details;
  }
  return details;
}

// DeepLabV3's atrous pyramid on a map smaller than its dilations: the outer taps of a
// 3x3 window at dilation 6 over 6x6 never land in the map, so the kernel runs 1x1 on the
// centre taps; at dilation 4 some outputs read every tap, and a bottom pad of 5 under a
// 2-row map at dilation 5 drops one window row. Grouped windows are left whole.
TEST(Conv, WindowsRunCroppedToTheTapsThatReadTheInput) {
  nlohmann::json d = run_against_naive({1, 16, 6, 6, 8, 3, 3, 1, 1, 6, 6, 6, 6, 6, 6, 1, true, ""}, 10);
  EXPECT_EQ(d["cropped_window"], "3x3 -> 1x1: the other taps read only padding");
  EXPECT_EQ(d["macs_run"], 8 * 6 * 6 * 16);
  EXPECT_FALSE(
      run_against_naive({1, 16, 6, 6, 8, 3, 3, 1, 1, 4, 4, 4, 4, 4, 4, 1, true, ""}, 20).contains("cropped_window"));
  d = run_against_naive({1, 4, 2, 7, 3, 2, 2, 1, 1, 5, 5, 0, 0, 5, 0, 1, true, ""}, 30);
  EXPECT_EQ(d["cropped_window"], "2x2 -> 1x2: the other taps read only padding");
  EXPECT_FALSE(
      run_against_naive({1, 16, 6, 6, 8, 3, 3, 1, 1, 6, 6, 6, 6, 6, 6, 2, true, ""}, 40).contains("cropped_window"));
}

// Random windows, strides, dilations and pads, many of them reading only padding from
// some taps: the output is the definition's whether the window runs cropped or not.
TEST(Conv, CroppedWindowsMatchTheDefinitionOverRandomWindows) {
  std::mt19937 rng(7);
  const auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int cropped = 0;
  for (uint32_t i = 0; i < 150; ++i) {
    ConvCase c{1, pick(1, 20), pick(1, 7), pick(1, 7), pick(1, 20), 0,          0, 0,    0,
               0, 0,           pick(0, 9), pick(0, 9), pick(0, 9),  pick(0, 9), 1, true, ""};
    c.kh = c.kw = pick(1, 4);
    c.sh = c.sw = pick(1, 3);
    c.dh = c.dw = pick(1, 6);
    const int64_t extent = (c.kh - 1) * c.dh + 1;
    if (c.h + c.pt + c.pb < extent || c.w + c.pl + c.pr < extent) continue;
    cropped += run_against_naive(c, 100 + 3 * i).contains("cropped_window");
    if (HasFailure()) {
      ADD_FAILURE() << "case " << i;
      return;
    }
  }
  EXPECT_GT(cropped, 25);  // the sweep exercises the crop, not only whole windows
}

TEST(ConvCost, SeedRegular3x3Example) {
  // Seed 003: 3x3, 128 filters, on 112x112x64 with same padding = 924,844,032 MACs.
  Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  OpResult r = cost_of("Conv",
                       {input({1, 64, 112, 112}, {}), weight({128, 64, 3, 3}, std::vector<float>(73728)),
                        weight({128}, std::vector<float>(128))},
                       a);
  EXPECT_EQ(r.cost.macs, 924'844'032);
  EXPECT_EQ(r.cost.flops, 2 * 924'844'032LL);
  EXPECT_EQ(r.cost.params, 73728 + 128);
  EXPECT_EQ(r.cost.bytes_read, 4 * (64 * 112 * 112 + 73728 + 128));
  EXPECT_EQ(r.cost.bytes_written, 4 * 128 * 112 * 112);
  EXPECT_EQ(r.kind, "regular");
}

TEST(ConvCost, SeedDepthwiseAndPointwiseExamples) {
  Attributes dw;
  dw.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  dw.set("group", int64_t{64});
  OpResult d = cost_of("Conv", {input({1, 64, 112, 112}, {}), weight({64, 1, 3, 3}, std::vector<float>(576))}, dw);
  EXPECT_EQ(d.cost.macs, 7'225'344);
  EXPECT_EQ(d.kind, "depthwise");
  OpResult p = cost_of("Conv", {input({1, 64, 112, 112}, {}), weight({128, 64, 1, 1}, std::vector<float>(8192))});
  EXPECT_EQ(p.cost.macs, 102'760'448);
  EXPECT_EQ(p.kind, "pointwise");
  EXPECT_EQ(d.cost.macs + p.cost.macs, 109'985'792);
}

TEST(ConvCost, GroupedKind) {
  Attributes a;
  a.set("group", int64_t{2});
  OpResult r = cost_of("Conv", {input({1, 8, 5, 5}, {}), weight({4, 4, 3, 3}, std::vector<float>(144))}, a);
  EXPECT_EQ(r.kind, "grouped");
  EXPECT_EQ(r.cost.macs, 3 * 3 * 4 * 3 * 3 * 4);
}

TEST(Conv, OneDimensionalMatchesTwoDimensionalOfHeightOne) {
  auto x = random_values(2 * 3 * 10, 4);
  auto wt = random_values(4 * 3 * 3, 5);
  Attributes a1, a2;
  a1.set("pads", std::vector<int64_t>{1, 2});
  a1.set("strides", std::vector<int64_t>{2});
  a2.set("pads", std::vector<int64_t>{0, 1, 0, 2});
  a2.set("strides", std::vector<int64_t>{1, 2});
  OpResult r1 = run_op("Conv", {input({2, 3, 10}, x), weight({4, 3, 3}, wt)}, a1);
  OpResult r2 = run_op("Conv", {input({2, 3, 1, 10}, x), weight({4, 3, 1, 3}, wt)}, a2);
  EXPECT_EQ(r1.shapes[0], (Shape{2, 4, 6}));
  EXPECT_EQ(r1.outputs[0], r2.outputs[0]);
}

TEST(Conv, AutoPadSameUpperMatchesExplicitPads) {
  // 7 wide, stride 2, kernel 4: total pad 3 -> 1 before, 2 after for SAME_UPPER.
  auto x = random_values(1 * 2 * 7 * 7, 6);
  auto wt = random_values(3 * 2 * 4 * 4, 7);
  Attributes same, expl;
  same.set("auto_pad", std::string("SAME_UPPER"));
  same.set("strides", std::vector<int64_t>{2, 2});
  expl.set("pads", std::vector<int64_t>{1, 1, 2, 2});
  expl.set("strides", std::vector<int64_t>{2, 2});
  OpResult a = run_op("Conv", {input({1, 2, 7, 7}, x), weight({3, 2, 4, 4}, wt)}, same);
  OpResult b = run_op("Conv", {input({1, 2, 7, 7}, x), weight({3, 2, 4, 4}, wt)}, expl);
  EXPECT_EQ(a.shapes[0], (Shape{1, 3, 4, 4}));
  EXPECT_EQ(a.outputs[0], b.outputs[0]);
}

TEST(Conv, RejectsBadAttributesAndShapes) {
  auto compile_conv = [](Shape x, Shape w, Attributes a) {
    compile(single_op_graph("Conv", {input(x, {}), weight(w, std::vector<float>(num_elements(w)))}, a));
  };
  Attributes stride0;
  stride0.set("strides", std::vector<int64_t>{0, 1});
  EXPECT_THROW(compile_conv({1, 3, 8, 8}, {4, 3, 3, 3}, stride0), ModelError);
  Attributes group3;
  group3.set("group", int64_t{3});
  EXPECT_THROW(compile_conv({1, 4, 8, 8}, {6, 1, 3, 3}, group3), ModelError);  // 3 does not divide 4
  EXPECT_THROW(compile_conv({1, 3, 8, 8}, {4, 2, 3, 3}, {}), ModelError);      // channel mismatch
  EXPECT_THROW(compile_conv({1, 3, 2, 2}, {4, 3, 5, 5}, {}), ModelError);      // kernel larger than input
  Attributes unknown;
  unknown.set("bogus", int64_t{1});
  EXPECT_THROW(compile_conv({1, 3, 8, 8}, {4, 3, 3, 3}, unknown), ModelError);
  try {
    compile_conv({1, 3, 2, 2}, {4, 3, 5, 5}, {});
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(), "<test>: node 'node' (Conv): kernel extent 5 is larger than the padded input 2");
  }
}

TEST(Conv, WindowAttributesPast32BitsAreRefusedBeforeAKernelIsChosen) {
  // Strides of 2^62 once overflowed the direct kernel's scratch size: SIGFPE.
  struct Case {
    Shape x, w;
    int64_t group;
  };
  const std::vector<Case> cases = {{{1, 3, 8, 8}, {4, 3, 3, 3}, 1},   // direct
                                   {{1, 8, 8, 8}, {4, 8, 3, 3}, 1},   // im2col
                                   {{1, 8, 8, 8}, {8, 1, 3, 3}, 8}};  // depthwise
  for (const Case& c : cases) {
    for (const char* name : {"strides", "dilations", "pads"}) {
      SCOPED_TRACE(name);
      Attributes a;
      a.set("group", c.group);
      a.set(name, std::string(name) == "pads" ? std::vector<int64_t>{0, 0, int64_t{1} << 62, 0}
                                              : std::vector<int64_t>{int64_t{1} << 62, 1});
      const TestTensor w = weight(c.w, std::vector<float>(num_elements(c.w)));
      EXPECT_EQ(compile_error("Conv", {input(c.x, {}), w}, a),
                fmt::format("<test>: node 'node' (Conv): attribute '{}' value 4611686018427387904 is out of range (at "
                            "most 2147483647)",
                            name));
    }
  }
  // The largest stride taken: one window, the same output as a stride as wide as the input.
  const std::vector<float> x = random_values(8 * 8 * 8, 3), wt = random_values(4 * 8 * 3 * 3, 4);
  Attributes widest, eight;
  widest.set("strides", std::vector<int64_t>{2147483647, 2147483647});
  eight.set("strides", std::vector<int64_t>{8, 8});
  const OpResult a = run_op("Conv", {input({1, 8, 8, 8}, x), weight({4, 8, 3, 3}, wt)}, widest);
  EXPECT_EQ(a.shapes[0], (Shape{1, 4, 1, 1}));
  EXPECT_EQ(a.outputs[0], run_op("Conv", {input({1, 8, 8, 8}, x), weight({4, 8, 3, 3}, wt)}, eight).outputs[0]);
  Attributes deconv;
  deconv.set("strides", std::vector<int64_t>{int64_t{1} << 62, 1});
  EXPECT_EQ(
      compile_error("ConvTranspose", {input({1, 2, 4, 4}, {}), weight({2, 2, 3, 3}, std::vector<float>(36))}, deconv),
      "<test>: node 'node' (ConvTranspose): attribute 'strides' value 4611686018427387904 is out of range (at "
      "most 2147483647)");
}

}  // namespace
}  // namespace minfer::test
