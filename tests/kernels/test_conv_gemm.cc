// The convolution on the packed GEMM (ops/kernels/conv_gemm.h) against a naive
// convolution written here: im2col fused into B's packing over every padding, strides 1
// to 3, dilations, groups, K = 1, sizes around the register tile and across the cache
// blocks, batches; weights prepacked or passed at run time; every activation in the
// epilogue; 1 and 2 threads (identical results).
#include <gtest/gtest.h>

#include <cmath>

#include "ops/kernels/conv_gemm.h"
#include "tests/isa_test_util.h"
#include "tests/kernels/conv_kernel_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

std::vector<float> conv_gemm_result(const ConvGeometry& s, int64_t batch, const std::vector<float>& x,
                                    const std::vector<float>& wt, const float* bias, const Activation& act,
                                    bool prepack, int threads) {
  const kernels::ConvGemm conv(s, prepack ? wt.data() : nullptr, active_isa());
  EXPECT_EQ(conv.prepacked(), prepack);
  std::vector<float> y(batch * s.cout * s.out_h * s.out_w, NAN);
  std::vector<float> workspace(kernels::conv_gemm_workspace_floats(s, conv.kernel(), prepack, threads), NAN);
  // Run-time weights are read through the call, so a prepacked conv gets garbage there.
  const std::vector<float> poison(wt.size(), NAN);
  conv.run(batch, x.data(), prepack ? poison.data() : wt.data(), bias, act, y.data(), workspace, threads);
  return y;
}

// Returns whether s passed, so sweeps stop at the first failure.
bool check(const ConvGeometry& s, int64_t batch, bool with_bias, const Activation& act, uint32_t seed) {
  const std::vector<float> x = random_values(batch * s.cin * s.h * s.w, seed);
  const std::vector<float> wt = random_values(s.cout * s.cin_per_group() * s.win.kh * s.win.kw, seed + 1);
  const std::vector<float> b = random_values(s.cout, seed + 2);
  const float* bias = with_bias ? b.data() : nullptr;
  const std::vector<float> expected = naive_conv(s, batch, x, wt, bias, act);
  bool ok = true;
  for (bool prepack : {true, false}) {
    const std::vector<float> one = conv_gemm_result(s, batch, x, wt, bias, act, prepack, 1);
    const std::vector<float> two = conv_gemm_result(s, batch, x, wt, bias, act, prepack, 2);
    const double err = max_rel_error(one, expected);
    EXPECT_LT(err, 1e-5) << describe(s, batch) << " bias " << with_bias << " prepacked " << prepack << " activation "
                         << activation_name(act);
    EXPECT_EQ(one, two) << describe(s, batch) << " prepacked " << prepack << ": 2 threads differ from 1";
    ok = ok && err < 1e-5 && one == two;
  }
  return ok;
}

TEST(ConvGemm, PointwiseOnlyForUnitStrideUnpadded1x1) {
  EXPECT_TRUE(kernels::is_pointwise(conv_shape(8, 5, 5, 4, 1, 1, 1, 0, 0, 0, 0)));
  EXPECT_TRUE(kernels::is_pointwise(conv_shape(8, 5, 5, 4, 2, 1, 1, 0, 0, 0, 0, 3)));  // dilation is moot
  EXPECT_FALSE(kernels::is_pointwise(conv_shape(8, 5, 5, 4, 1, 1, 2, 0, 0, 0, 0)));
  EXPECT_FALSE(kernels::is_pointwise(conv_shape(8, 5, 5, 4, 1, 1, 1, 0, 1, 0, 0)));
  EXPECT_FALSE(kernels::is_pointwise(conv_shape(8, 5, 5, 4, 1, 3, 1, 1, 1, 1, 1)));
}

TEST(ConvGemm, MatchesNaiveOverPaddingsStridesAndDilations) {
  uint32_t seed = 100;
  for (int64_t k : {1, 2, 3, 5})
    for (int64_t stride : {1, 2, 3})
      for (int64_t dilation : {1, 2})
        for (int64_t pad : {0, 1, 2}) {
          // Asymmetric pads, odd sizes, channels that are no multiple of any tile.
          const ConvGeometry s = conv_shape(5, 11, 9, 7, 1, k, stride, pad, pad + 1 < 3 ? pad + 1 : 0, pad,
                                            pad > 0 ? pad - 1 : 1, dilation);
          if (!window_fits(s)) continue;
          if (!check(s, 1, seed % 2 == 0, {}, seed)) return;
          ++seed;
        }
}

TEST(ConvGemm, MatchesNaiveOnEdgeShapes) {
  struct Case {
    ConvGeometry s;
    int64_t batch;
  };
  const Case cases[] = {
      {conv_shape(1, 6, 6, 3, 1, 1, 1, 0, 0, 0, 0), 1},       // K = 1, pointwise
      {conv_shape(1, 7, 5, 5, 1, 1, 2, 0, 0, 0, 0), 2},       // K = 1, strided
      {conv_shape(3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0), 1},       // one pixel, one output channel
      {conv_shape(3, 1, 9, 4, 1, 1, 1, 0, 0, 0, 0), 1},       // one row
      {conv_shape(6, 4, 4, 6, 3, 1, 1, 0, 0, 0, 0), 3},       // grouped pointwise, batch 3
      {conv_shape(6, 9, 7, 9, 3, 3, 2, 1, 1, 1, 1), 2},       // grouped 3x3 (cin/g 2, cout/g 3)
      {conv_shape(8, 10, 10, 4, 2, 3, 1, 1, 1, 1, 1, 2), 1},  // grouped, dilated
      {conv_shape(13, 33, 35, 17, 1, 3, 1, 1, 1, 1, 1), 2},   // N 1155: many panels, ragged edge
      {conv_shape(31, 6, 7, 25, 1, 3, 1, 1, 1, 1, 1), 1},     // K 279: two k-blocks
      {conv_shape(9, 5, 5, 173, 1, 1, 1, 0, 0, 0, 0), 1},     // M 173: two row blocks
      {conv_shape(2, 70, 70, 3, 1, 1, 1, 0, 0, 0, 0), 1},     // N 4900: two column blocks
      {conv_shape(3, 64, 67, 5, 1, 3, 3, 2, 0, 1, 2), 1},     // stride 3, asymmetric pads
      {conv_shape(4, 12, 12, 6, 1, 3, 1, 3, 3, 3, 3), 1},     // pads beyond the window's reach
      // Groups worth a thread each (group_threads): 2 threads run whole groups' GEMMs.
      {conv_shape(64, 14, 14, 64, 4, 3, 1, 1, 1, 1, 1), 1},  // RegNet-like 16-wide groups
      {conv_shape(48, 20, 20, 48, 3, 1, 1, 0, 0, 0, 0), 2},  // an odd count, pointwise, batch 2
  };
  uint32_t seed = 500;
  for (const Case& c : cases) {
    ASSERT_TRUE(window_fits(c.s));
    if (!check(c.s, c.batch, true, {}, seed++)) return;
    if (!check(c.s, c.batch, false, {}, seed++)) return;
  }
}

TEST(ConvGemm, AppliesBiasAndEveryActivationInTheEpilogue) {
  uint32_t seed = 900;
  for (const Activation& act : every_activation()) {
    if (!check(conv_shape(5, 9, 13, 14, 1, 3, 2, 1, 1, 1, 1), 2, true, act, seed++)) return;  // im2col
    if (!check(conv_shape(6, 7, 5, 10, 2, 1, 1, 0, 0, 0, 0), 1, true, act, seed++)) return;   // pointwise
  }
}

// A pointwise convolution on few pixels computes them as the product's rows, stored
// transposed (kernels::pointwise_pixels_as_rows), where the pixels would leave most of a
// row of vectors empty; the 56x56 layers keep the pixels along the vectors.
TEST(ConvGemm, FewPixelsAreTheRowsOfTheProduct) {
  for (Isa isa : isas_under_test()) {
    if (isa == Isa::kScalar) continue;  // four-wide vectors waste little on any plane
    const kernels::GemmKernel& kn = kernels::gemm_kernel(isa);
    EXPECT_TRUE(kernels::pointwise_pixels_as_rows(conv_shape(160, 7, 7, 960, 1, 1, 1, 0, 0, 0, 0), kn)) << kn.name;
    EXPECT_TRUE(kernels::pointwise_pixels_as_rows(conv_shape(96, 1, 1, 24, 1, 1, 1, 0, 0, 0, 0), kn)) << kn.name;
    EXPECT_FALSE(kernels::pointwise_pixels_as_rows(conv_shape(144, 56, 56, 24, 1, 1, 1, 0, 0, 0, 0), kn)) << kn.name;
    EXPECT_FALSE(kernels::pointwise_pixels_as_rows(conv_shape(96, 7, 7, 960, 1, 3, 1, 1, 1, 1, 1), kn)) << kn.name;
  }
  const ConvGeometry s = conv_shape(160, 7, 7, 960, 1, 1, 1, 0, 0, 0, 0);
  const std::vector<float> wt(s.cout * s.cin, 0.5f);
  const kernels::GemmKernel& kn = kernels::gemm_kernel(active_isa());
  EXPECT_EQ(kernels::ConvGemm(s, wt.data(), active_isa()).pixels_as_rows(), kernels::pointwise_pixels_as_rows(s, kn));
  EXPECT_FALSE(kernels::ConvGemm(s, nullptr, active_isa()).pixels_as_rows());  // weights packed per call: as A
}

TEST(ConvGemm, PixelsAsRowsMatchNaive) {
  const ConvGeometry shapes[] = {
      conv_shape(40, 7, 7, 96, 1, 1, 1, 0, 0, 0, 0),    // 49 pixels: four full row tiles and one pixel
      conv_shape(24, 1, 1, 40, 1, 1, 1, 0, 0, 0, 0),    // one pixel (squeeze-excitation): a wide tile
      conv_shape(17, 1, 3, 70, 1, 1, 1, 0, 0, 0, 0),    // three pixels, channels past the last vector
      conv_shape(32, 7, 7, 64, 2, 1, 1, 0, 0, 0, 0),    // two groups
      conv_shape(600, 5, 5, 100, 1, 1, 1, 0, 0, 0, 0),  // K 600: several k-blocks read C back
  };
  uint32_t seed = 1300;
  for (const ConvGeometry& s : shapes) {
    if (!check(s, 2, true, {}, seed++)) return;
    if (!check(s, 1, false, {ActivationKind::kHardSwish}, seed++)) return;
    if (!check(s, 1, true, {ActivationKind::kSigmoid}, seed++)) return;
  }
}

// A strided 1x1 convolution (ResNet's downsampling shortcut) subsamples its input into
// the workspace and runs as a pointwise one: odd planes, strides 2 and 3, a stride per
// axis, groups, batches, and a 7x7 output computed with pixels as rows.
TEST(ConvGemm, StridedPointwiseSubsamplesTheInput) {
  ConvGeometry asymmetric = conv_shape(6, 9, 8, 10, 1, 1, 1, 0, 0, 0, 0);
  asymmetric.win.sh = 2;
  asymmetric.win.sw = 3;
  asymmetric.out_h = 5;
  asymmetric.out_w = 3;
  const ConvGeometry shapes[] = {
      conv_shape(16, 7, 7, 24, 1, 1, 2, 0, 0, 0, 0),    // odd plane: 4x4 outputs
      conv_shape(40, 14, 14, 64, 1, 1, 2, 0, 0, 0, 0),  // 7x7 outputs: pixels as rows on SIMD targets
      conv_shape(9, 11, 10, 13, 1, 1, 3, 0, 0, 0, 0),   // stride 3
      conv_shape(12, 10, 10, 18, 3, 1, 2, 0, 0, 0, 0),  // groups
      asymmetric,
  };
  uint32_t seed = 1400;
  for (const ConvGeometry& s : shapes) {
    ASSERT_TRUE(kernels::is_strided_pointwise(s)) << describe(s, 1);
    const kernels::ConvGemm conv(s, nullptr, active_isa());
    EXPECT_TRUE(conv.pointwise());
    EXPECT_EQ(conv.subsampled_floats(), s.cin * s.out_h * s.out_w);
    if (!check(s, 2, true, {ActivationKind::kRelu}, seed++)) return;
  }
  EXPECT_FALSE(kernels::is_strided_pointwise(conv_shape(8, 5, 5, 4, 1, 1, 1, 0, 0, 0, 0)));
  EXPECT_FALSE(kernels::is_strided_pointwise(conv_shape(8, 5, 5, 4, 1, 1, 2, 0, 1, 0, 0)));
  EXPECT_FALSE(kernels::is_strided_pointwise(conv_shape(8, 5, 5, 4, 1, 3, 2, 1, 1, 1, 1)));
}

TEST(ConvGemm, GroupsTooSmallToSplitRunOnePerThread) {
  // RegNetX-400MF's last stage: 25 groups of 16 channels on 7x7, each group's GEMM too
  // small to split, so two threads take whole groups, each with one thread's scratch.
  const ConvGeometry s = conv_shape(400, 7, 7, 400, 25, 3, 1, 1, 1, 1, 1);
  const kernels::GemmKernel& kn = kernels::gemm_kernel(active_isa());
  EXPECT_EQ(kernels::conv_gemm_workspace_floats(s, kn, true, 2),
            2 * kernels::conv_gemm_workspace_floats(s, kn, true, 1));
}

TEST(ConvGemm, WorkspaceHoldsNoColumnMatrix) {
  // A 3x3 64->128 on 56x56: the column matrix would be 576 x 3136 floats; the GEMM's
  // scratch holds the B panels of one k-block (at most kc of the 576 rows) of one column
  // block, packed from the image as the micro-kernels need them.
  const ConvGeometry s = conv_shape(64, 56, 56, 128, 1, 3, 1, 1, 1, 1, 1);
  const kernels::GemmKernel& kn = kernels::gemm_kernel(active_isa());
  const int64_t packed = kernels::conv_gemm_workspace_floats(s, kn, true, 1);
  EXPECT_GT(packed, 0);
  EXPECT_LT(packed, s.col_floats() / 2);
  EXPECT_GT(kernels::conv_gemm_workspace_floats(s, kn, false, 1), packed);  // A is packed per run too
}

}  // namespace
}  // namespace minfer::test
