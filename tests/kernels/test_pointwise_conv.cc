// The direct pointwise kernel (ops/kernels/pointwise_conv.h) against a naive convolution
// written here and, bit for bit, against the pointwise GEMM it replaces: output channels
// around its register tile, pixels around its vectors and tiles, K from 1 to the largest
// it takes, a batch, every activation, a residual, an input scale, chunks of weights,
// 1 and 2 threads (identical results); and where it applies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/kernels/conv_gemm.h"
#include "ops/kernels/gemm.h"
#include "ops/kernels/pointwise_conv.h"
#include "tests/isa_test_util.h"
#include "tests/kernels/conv_kernel_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

ConvGeometry pointwise_shape(int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t batch = 1, int64_t stride = 1) {
  ConvGeometry s = conv_shape(cin, h, w, cout, 1, 1, stride, 0, 0, 0, 0);
  s.batch = batch;
  return s;
}

struct Operands {
  std::vector<float> x, wt, bias, residual, scale;
  Operands(const ConvGeometry& s, uint32_t seed)
      : x(random_values(s.batch * s.cin * s.h * s.w, seed)),
        wt(random_values(s.cout * s.cin, seed + 1)),
        bias(random_values(s.cout, seed + 2)),
        residual(random_values(s.batch * s.cout * s.out_h * s.out_w, seed + 3)),
        scale(random_values(s.batch * s.cin, seed + 4, 0.0f, 2.0f)) {}
};

struct Options {
  bool bias = true, residual = false, scale = false;
  Activation act;
};

std::vector<float> direct_result(const kernels::PointwiseKernel& k, const ConvGeometry& s, const Operands& o,
                                 const Options& opt, int threads, bool split_output_channels = false) {
  const kernels::PointwiseConv conv(k, s, o.wt.data(), split_output_channels);
  std::vector<float> y(s.batch * s.cout * s.out_h * s.out_w, NAN);
  std::vector<float> workspace(conv.workspace_floats(opt.scale), NAN);
  conv.run(s.batch, o.x.data(), opt.bias ? o.bias.data() : nullptr, opt.act, y.data(), workspace, threads,
           opt.residual ? o.residual.data() : nullptr, opt.scale ? o.scale.data() : nullptr);
  return y;
}

std::vector<float> gemm_result(const ConvGeometry& s, Isa isa, const Operands& o, const Options& opt) {
  const kernels::ConvGemm conv(s, o.wt.data(), isa);
  std::vector<float> y(s.batch * s.cout * s.out_h * s.out_w, NAN);
  std::vector<float> workspace(kernels::conv_gemm_workspace_floats(s, conv.kernel(), true, 1), NAN);
  std::vector<float> xs = o.x;  // the pixels-as-rows GEMM takes no scale: scaled here, as the op does
  if (opt.scale && conv.pixels_as_rows())
    for (size_t i = 0; i < xs.size(); ++i) xs[i] *= o.scale[i / (s.h * s.w)];
  const bool scale_in_gemm = opt.scale && !conv.pixels_as_rows();
  conv.run(s.batch, xs.data(), o.wt.data(), opt.bias ? o.bias.data() : nullptr, opt.act, y.data(), workspace, 1,
           opt.residual ? o.residual.data() : nullptr, scale_in_gemm ? o.scale.data() : nullptr);
  return y;
}

std::vector<float> naive_result(const ConvGeometry& s, const Operands& o, const Options& opt) {
  std::vector<float> xs = o.x;
  if (opt.scale)
    for (size_t i = 0; i < xs.size(); ++i) xs[i] *= o.scale[i / (s.h * s.w)];
  // The activation after the residual: naive_conv's own epilogue runs without either.
  std::vector<float> y = naive_conv(s, s.batch, xs, o.wt, opt.bias ? o.bias.data() : nullptr, Activation{});
  for (size_t i = 0; i < y.size(); ++i) y[i] = opt.act.apply(opt.residual ? y[i] + o.residual[i] : y[i]);
  return y;
}

// Returns whether the case passed, so sweeps stop at the first failure.
bool check(const kernels::PointwiseKernel& k, const ConvGeometry& s, const Options& opt, uint32_t seed) {
  const Operands o(s, seed);
  const std::vector<float> one = direct_result(k, s, o, opt, 1), two = direct_result(k, s, o, opt, 2);
  const std::vector<float> gemm = gemm_result(s, k.isa, o, opt);
  const double err = max_rel_error(one, naive_result(s, o, opt));
  const std::string what = describe(s, s.batch) + fmt::format(" bias {} residual {} scale {} activation {}", opt.bias,
                                                              opt.residual, opt.scale, activation_name(opt.act));
  // Rounding errors of a sum grow as the square root of its terms.
  const double tolerance = 1e-5 * std::max(1.0, std::sqrt(static_cast<double>(s.cin) / 192.0));
  EXPECT_LT(err, tolerance) << k.name << ": " << what;
  EXPECT_EQ(one, two) << k.name << ": " << what << ": 2 threads differ from 1";
  // Within one K block of the GEMM, its bits (NaN != NaN: compare the bytes); not with a
  // scale, which the direct kernel folds into the weights and the GEMM into the input;
  // nor for another target's kernel than the active one, whose activations the GEMM's
  // epilogue applies (AVX-512's sigmoid and AVX2's may differ in the last bit; the
  // engine never mixes targets).
  const bool same_bits = s.cin > kernels::gemm_kernel(k.isa).kc || opt.scale || k.isa != active_isa() ||
                         std::memcmp(one.data(), gemm.data(), one.size() * sizeof(float)) == 0;
  EXPECT_TRUE(same_bits) << k.name << ": " << what << ": not the pointwise GEMM's bits";
  return err < tolerance && one == two && same_bits;
}

std::vector<const kernels::PointwiseKernel*> kernels_under_test() {
  std::vector<const kernels::PointwiseKernel*> found;
  for (Isa isa : isas_under_test())
    if (const auto* k = kernels::find_pointwise_kernel(pointwise_shape(8, 16, 16, 8), isa)) found.push_back(k);
  return found;
}

TEST(PointwiseConv, MatchesNaiveAndTheGemmOverChannelsPixelsAndK) {
  const auto found = kernels_under_test();
  if (found.empty()) GTEST_SKIP() << "no direct pointwise kernel for this target";
  uint32_t seed = 1;
  for (const kernels::PointwiseKernel* k : found) {
    const int64_t tile = int64_t{k->vectors} * k->lanes, kc = kernels::gemm_kernel(k->isa).kc;
    // K: small, the GEMM's K block (the same bits), and past it where the kernel goes on.
    std::vector<int64_t> ks = {1, 3, 16, 17, kc};
    if (kernels::pointwise_direct_max_k(k->isa) > kc) ks.insert(ks.end(), {kc + 1, 3 * kc + 5});
    // Output channels: below, at and around the register tile's; pixels: whole tiles, a
    // partial vector after them (of 1 and 7 pixels: AVX-512 sums those in half vectors;
    // of 13: in whole ones), whole vectors short of another tile, and the rest.
    for (int64_t cout : {1, 5, 6, 7, 12, 13, 33})
      for (int64_t pixels : {4 * tile, 4 * tile + 1, 4 * tile + k->lanes, 5 * tile + 2 * k->lanes - 3, 9 * tile + 7})
        for (int64_t cin : ks)
          if (!check(*k, pointwise_shape(cin, 1, pixels, cout), {}, seed++)) return;
  }
}

TEST(PointwiseConv, EpiloguesBatchesAndScales) {
  const auto found = kernels_under_test();
  if (found.empty()) GTEST_SKIP() << "no direct pointwise kernel for this target";
  uint32_t seed = 500;
  // Two images of 255 pixels (a tail of 15 on AVX-512, summed in full vectors), of 196
  // (a tail of 4, summed in half vectors) and of 169 (on AVX-512 a tile of a vector and
  // 9 pixels, whose residual and stores are partial past the first vector).
  for (const kernels::PointwiseKernel* k : found)
    for (const ConvGeometry& s :
         {pointwise_shape(19, 15, 17, 14, 2), pointwise_shape(19, 14, 14, 14, 2), pointwise_shape(19, 13, 13, 14, 2)})
      for (const Activation& act : every_activation())
        for (bool residual : {false, true})
          for (bool scale : {false, true})
            for (bool bias : {false, true})
              if (!check(*k, s, {bias, residual, scale, act}, seed++)) return;
}

// Asked to (its reader splits channels) or with more output channels than pixels, a team
// splits the output channels of planes up to 28x28: the same bits as one thread's, on 1
// and 2 threads, a batch, a last block of output channels narrower than the tile, every
// epilogue.
TEST(PointwiseConv, ThreadsSplittingOutputChannelsGiveTheSameBits) {
  const auto found = kernels_under_test();
  if (found.empty()) GTEST_SKIP() << "no direct pointwise kernel for this target";
  uint32_t seed = 900;
  for (const kernels::PointwiseKernel* k : found) {
    const auto splits = [&](const ConvGeometry& s, bool asked) {
      return kernels::PointwiseConv(*k, s, Operands(s, 1).wt.data(), asked).splits_output_channels();
    };
    EXPECT_TRUE(splits(pointwise_shape(8, 28, 28, 8), true)) << k->name;
    EXPECT_FALSE(splits(pointwise_shape(8, 29, 28, 8), true)) << k->name;
    EXPECT_FALSE(splits(pointwise_shape(8, 14, 14, 8), false)) << k->name;
    // Unasked, where the weights outnumber an input channel's pixels (m > pixels).
    EXPECT_TRUE(splits(pointwise_shape(8, 13, 13, 170), false)) << k->name;
    EXPECT_FALSE(splits(pointwise_shape(8, 13, 13, 169), false)) << k->name;
    EXPECT_FALSE(splits(pointwise_shape(8, 29, 29, 1000), false)) << k->name;
    for (const ConvGeometry& s : {pointwise_shape(32, 14, 14, 100, 2), pointwise_shape(24, 28, 28, 144, 1),
                                  pointwise_shape(16, 28, 27, 40, 2, 2), pointwise_shape(40, 13, 13, 250, 2)})
      for (const Options& opt : {Options{}, Options{true, true, true, Activation{ActivationKind::kRelu}}}) {
        const Operands o(s, seed++);
        const std::vector<float> one_thread = direct_result(*k, s, o, opt, 1);
        EXPECT_EQ(direct_result(*k, s, o, opt, 2), one_thread) << k->name << " " << describe(s, s.batch);
        EXPECT_EQ(direct_result(*k, s, o, opt, 1, true), one_thread) << k->name << " " << describe(s, s.batch);
        EXPECT_EQ(direct_result(*k, s, o, opt, 2, true), one_thread) << k->name << " " << describe(s, s.batch);
      }
  }
}

// A strided 1x1 convolution (ResNet's downsampling) reads its input subsampled: on two
// threads, each item the pixels it computes (an item's pixels start and end mid-row: 22x23
// and 15x15 outputs in blocks of 48 or 24 pixels), the same bits as one thread's.
TEST(PointwiseConv, StridedReadsTheSubsampledInput) {
  const auto found = kernels_under_test();
  if (found.empty()) GTEST_SKIP() << "no direct pointwise kernel for this target";
  uint32_t seed = 700;
  for (const kernels::PointwiseKernel* k : found)
    for (const auto& [width, stride] : {std::pair{47, 2}, {45, 2}, {47, 3}}) {
      const ConvGeometry s = pointwise_shape(24, 44, width, 13, 2, stride);
      ASSERT_EQ(kernels::find_pointwise_kernel(s, k->isa), k);
      Options opt;
      opt.residual = true;
      opt.act = {ActivationKind::kRelu};
      if (!check(*k, s, opt, seed++)) return;
      const kernels::PointwiseConv conv(*k, s, Operands(s, 1).wt.data());
      EXPECT_EQ(conv.workspace_floats(), s.cin * s.out_h * s.out_w);
    }
}

TEST(PointwiseConv, WeightsInChunksOfOutputChannels) {
  const auto found = kernels_under_test();
  if (found.empty()) GTEST_SKIP() << "no direct pointwise kernel for this target";
  for (const kernels::PointwiseKernel* k : found) {
    // K of the GEMM's block: a chunk of weights holds fewer channels than the layer has.
    const ConvGeometry s = pointwise_shape(kernels::gemm_kernel(k->isa).kc, 14, 15, 400);
    const std::vector<float> wt(s.cout * s.cin, 1.0f);
    const kernels::PointwiseConv conv(*k, s, wt.data());
    EXPECT_LT(conv.chunk(), s.cout);
    EXPECT_EQ(conv.chunk() % k->channels, 0);
    Options opt;
    opt.act = {ActivationKind::kRelu};
    opt.residual = true;
    check(*k, s, opt, 900);
  }
}

// Three tiles of pixels on AVX-512, four on AVX2 (where each was measured faster than the GEMM).
TEST(PointwiseConv, OnlyForPlainPointwiseConvolutionsWithEnoughTilesOfPixels) {
  for (Isa isa : isas_under_test()) {
    SCOPED_TRACE(isa_name(isa));
    if (isa == Isa::kScalar) {
      EXPECT_EQ(kernels::find_pointwise_kernel(pointwise_shape(8, 16, 16, 8), isa), nullptr);
      continue;
    }
    const kernels::PointwiseKernel* k = kernels::find_pointwise_kernel(pointwise_shape(8, 16, 16, 8), isa);
    ASSERT_NE(k, nullptr);
    const int64_t tiles = isa == Isa::kAvx512 ? 3 : 4;
    const int64_t pixels = tiles * k->vectors * k->lanes, max_k = kernels::pointwise_direct_max_k(isa);
    EXPECT_NE(kernels::find_pointwise_kernel(pointwise_shape(max_k, 1, pixels, 8), isa), nullptr);
    if (max_k < std::numeric_limits<int64_t>::max()) {  // K
      EXPECT_EQ(kernels::find_pointwise_kernel(pointwise_shape(max_k + 1, 1, pixels, 8), isa), nullptr);
    }
    EXPECT_EQ(kernels::find_pointwise_kernel(pointwise_shape(8, 1, pixels - 1, 8), isa), nullptr);           // pixels
    EXPECT_EQ(kernels::find_pointwise_kernel(conv_shape(8, 16, 16, 8, 2, 1, 1, 0, 0, 0, 0), isa), nullptr);  // groups
    EXPECT_NE(kernels::find_pointwise_kernel(conv_shape(8, 2 * 16, 2 * 16, 8, 1, 1, 2, 0, 0, 0, 0), isa), nullptr);
    EXPECT_EQ(kernels::find_pointwise_kernel(conv_shape(8, 16, 16, 8, 1, 1, 1, 1, 0, 0, 0), isa), nullptr);  // padded
    EXPECT_EQ(kernels::find_pointwise_kernel(conv_shape(8, 16, 16, 8, 1, 3, 1, 1, 1, 1, 1), isa), nullptr);  // 3x3
  }
}

}  // namespace
}  // namespace minfer::test
