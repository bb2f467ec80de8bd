// The direct small-channel convolutions of every target under test (isas_under_test()), against the scalar
// im2col + GEMM reference (ops/reference/conv2d.h) followed by the activation element by
// element: channel counts around its 4- and 8-channel tiles, widths around its vector tile,
// every padding of a 3x3 window, strides, dilations, batches, 1 and 2 threads.
#include <gtest/gtest.h>

#include "ops/kernels/direct_conv.h"
#include "tests/isa_test_util.h"
#include "tests/kernels/conv_kernel_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

using kernels::DirectConvKernel;

std::vector<float> reference_result(const ConvGeometry& s, int64_t batch, const std::vector<float>& x,
                                    const std::vector<float>& wt, const float* bias, const Activation& act) {
  const int64_t in_image = s.cin * s.h * s.w, out_image = s.cout * s.out_h * s.out_w;
  std::vector<float> y(batch * out_image), col(s.col_floats());
  for (int64_t n = 0; n < batch; ++n)
    reference::conv2d_im2col(s, x.data() + n * in_image, wt.data(), bias, y.data() + n * out_image, col.data());
  for (float& v : y) v = act.apply(v);
  return y;
}

std::vector<float> kernel_result(const DirectConvKernel& k, const ConvGeometry& s, int64_t batch,
                                 const std::vector<float>& x, const std::vector<float>& wt, const float* bias,
                                 const Activation& act, int threads) {
  std::vector<float> y(batch * s.cout * s.out_h * s.out_w, NAN);
  const KeptScratch kept(threads, kernels::direct_conv_thread_floats(k, s));
  kernels::direct_conv2d(k, s, batch, x.data(), wt.data(), bias, y.data(), kept.own, threads, act);
  return y;
}

// Runs kernel k on s against the reference, for 1 and 2 threads (whose results must be
// identical). Returns whether it passed, so sweeps can stop at the first failure.
bool check(const DirectConvKernel& k, const ConvGeometry& s, int64_t batch, bool with_bias, const Activation& act,
           uint32_t seed) {
  const std::vector<float> x = random_values(batch * s.cin * s.h * s.w, seed);
  const std::vector<float> wt = random_values(s.cout * s.cin * s.win.kh * s.win.kw, seed + 1);
  const std::vector<float> b = random_values(s.cout, seed + 2);
  const float* bias = with_bias ? b.data() : nullptr;
  const std::vector<float> expected = reference_result(s, batch, x, wt, bias, act);
  const std::vector<float> one = kernel_result(k, s, batch, x, wt, bias, act, 1);
  const std::vector<float> two = kernel_result(k, s, batch, x, wt, bias, act, 2);
  const double err = max_rel_error(one, expected);
  EXPECT_LT(err, 1e-5) << k.name << " " << describe(s, batch) << " bias " << with_bias << " activation "
                       << static_cast<int>(act.kind);
  EXPECT_EQ(one, two) << k.name << " " << describe(s, batch) << ": 2 threads differ from 1";
  return err < 1e-5 && one == two;
}

TEST(DirectConvKernels, ChosenForFewInputOrOutputChannels) {
  auto name = [](const ConvGeometry& s) {
    const DirectConvKernel* k = kernels::find_direct_conv_kernel(s, Isa::kScalar);
    return k ? std::string(k->name) : std::string("none");
  };
  EXPECT_EQ(name(conv_shape(3, 16, 16, 32, 1, 3, 2, 1, 1, 1, 1)), "direct_conv_f32_4x4_scalar");
  EXPECT_EQ(name(conv_shape(4, 16, 16, 8, 1, 7, 2, 3, 3, 3, 3)), "direct_conv_f32_4x4_scalar");
  EXPECT_EQ(name(conv_shape(5, 16, 16, 8, 1, 3, 1, 1, 1, 1, 1)), "none");  // too many input channels
  EXPECT_EQ(name(conv_shape(4, 16, 16, 8, 2, 3, 1, 1, 1, 1, 1)), "none");  // grouped
  EXPECT_EQ(name(conv_shape(1, 40, 40, 8, 1, 17, 1, 0, 0, 0, 0)), "direct_conv_f32_4x4_scalar");  // 289 taps
  EXPECT_EQ(name(conv_shape(4, 40, 40, 8, 1, 33, 1, 0, 0, 0, 0)), "none");  // 4356 taps: over the tap table
  if (isa_runnable(Isa::kAvx2)) {
    const auto avx2 = [](const ConvGeometry& s) {
      const DirectConvKernel* k = kernels::find_direct_conv_kernel(s, Isa::kAvx2);
      return k ? std::string(k->name) : std::string("none");
    };
    EXPECT_EQ(avx2(conv_shape(3, 16, 16, 32, 1, 3, 2, 1, 1, 1, 1)), "direct_conv_f32_4x24_avx2");
    // Fewer output channels than the 8 lanes: any input channels, a window past 1x1,
    // strides within it.
    EXPECT_EQ(avx2(conv_shape(64, 16, 16, 7, 1, 3, 1, 1, 1, 1, 1)), "direct_conv_f32_4x24_avx2");
    EXPECT_EQ(avx2(conv_shape(64, 16, 16, 8, 1, 3, 1, 1, 1, 1, 1)), "none");
    EXPECT_EQ(avx2(conv_shape(64, 16, 16, 3, 1, 1, 1, 0, 0, 0, 0)), "none");  // 1x1
    EXPECT_EQ(avx2(conv_shape(64, 16, 16, 3, 1, 3, 4, 1, 1, 1, 1)), "none");  // stride 4 past the window
    EXPECT_EQ(avx2(conv_shape(64, 16, 16, 4, 2, 3, 1, 1, 1, 1, 1)), "none");  // grouped
  }
  if (isa_runnable(Isa::kAvx512)) {
    // The 8-channel tile where a core has two 512-bit FMA pipes (Zen 5, Intel), the
    // 4-channel one on one (Zen 4).
    EXPECT_STREQ(kernels::direct_conv_kernel(Isa::kAvx512, 1)->name, "direct_conv_f32_4x48_avx512");
    EXPECT_STREQ(kernels::direct_conv_kernel(Isa::kAvx512, 2)->name, "direct_conv_f32_8x48_avx512");
    EXPECT_EQ(kernels::direct_conv_kernels(Isa::kAvx512).size(), 2u);
  } else {
    EXPECT_EQ(kernels::direct_conv_kernel(Isa::kAvx512), nullptr);
    EXPECT_TRUE(kernels::direct_conv_kernels(Isa::kAvx512).empty());
  }
}

// Every padding 0..2 on each side of a 3x3 window, strides 1 and 2, over widths and
// heights down to 1 and channel counts around the 4- and 8-channel tiles.
TEST(DirectConvKernels, MatchReferenceOverEveryPadding) {
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{1, 1}, {1, 6}, {5, 1}, {4, 9}, {3, 25}};
  uint32_t seed = 1;
  for (Isa isa : isas_under_test())
    for (const DirectConvKernel* kp : kernels::direct_conv_kernels(isa)) {
      const DirectConvKernel& k = *kp;
      for (int64_t stride : {1, 2})
        for (auto [h, w] : sizes)
          for (int64_t pt = 0; pt < 3; ++pt)
            for (int64_t pl = 0; pl < 3; ++pl)
              for (int64_t pb = 0; pb < 3; ++pb)
                for (int64_t pr = 0; pr < 3; ++pr) {
                  const int64_t cin = 1 + (seed % 4), cout = 1 + (seed % 10);
                  const ConvGeometry s = conv_shape(cin, h, w, cout, 1, 3, stride, pt, pl, pb, pr);
                  if (!window_fits(s)) continue;
                  if (!check(k, s, 1, true, {}, seed++)) return;
                }
    }
}

// The first layers of real models and odd windows: 7x7 stride 2, rectangular kernels,
// stride 3, dilation 2, strides past the window (input rows no window reads), up to the
// 1024-tap table; output widths around the 24- and 48-column tiles; batches.
TEST(DirectConvKernels, MatchReferenceOnWindowsStridesAndDilations) {
  struct Case {
    int64_t batch, cin, h, w, cout, kh, kw, stride, dilation, pt, pl, pb, pr;
  };
  const std::vector<Case> cases = {
      {1, 3, 29, 29, 9, 7, 7, 2, 1, 3, 3, 3, 3},    // ResNet's first layer, small
      {2, 3, 33, 49, 32, 3, 3, 2, 1, 1, 1, 1, 1},   // MobileNet's, 25 output columns, batch 2
      {1, 1, 20, 48, 5, 3, 3, 1, 1, 0, 0, 0, 0},    // 46 columns: one tile and an edge
      {2, 4, 17, 50, 7, 5, 5, 1, 1, 2, 2, 2, 2},    // 50 columns, 5x5
      {1, 2, 15, 31, 6, 2, 4, 1, 1, 0, 1, 1, 2},    // rectangular, asymmetric pads
      {1, 3, 26, 40, 8, 3, 3, 3, 1, 1, 1, 1, 1},    // stride 3
      {1, 4, 19, 37, 4, 3, 3, 1, 2, 2, 2, 2, 2},    // dilation 2
      {1, 3, 21, 45, 6, 3, 3, 2, 2, 2, 2, 2, 2},    // stride 2, dilation 2
      {3, 1, 9, 9, 3, 1, 1, 1, 1, 0, 0, 0, 0},      // 1x1
      {1, 2, 37, 30, 5, 1, 1, 2, 1, 0, 0, 0, 0},    // 1x1 stride 2: rows no window reads
      {1, 3, 40, 31, 4, 2, 2, 3, 1, 1, 0, 1, 0},    // 2x2 stride 3: a row of three unread
      {1, 3, 51, 51, 5, 11, 11, 4, 1, 2, 2, 2, 2},  // AlexNet's 11x11 stride 4: 363 taps
      {1, 4, 20, 36, 3, 16, 16, 1, 1, 0, 0, 0, 0},  // 1024 taps: the whole tap table
  };
  uint32_t seed = 1000;
  for (Isa isa : isas_under_test())
    for (const DirectConvKernel* kp : kernels::direct_conv_kernels(isa)) {
      const DirectConvKernel& k = *kp;
      for (const Case& c : cases)
        for (bool bias : {false, true}) {
          ConvGeometry s = conv_shape(c.cin, c.h, c.w, c.cout, 1, c.kh, c.stride, c.pt, c.pl, c.pb, c.pr, c.dilation);
          s.win.kw = c.kw;
          s.out_w = (c.w + c.pl + c.pr - ((c.kw - 1) * c.dilation + 1)) / c.stride + 1;
          ASSERT_TRUE(window_fits(s));
          if (!check(k, s, c.batch, bias, {}, seed++)) return;
        }
    }
}

TEST(DirectConvKernels, ApplyBiasAndEveryActivationInTheEpilogue) {
  uint32_t seed = 2000;
  for (Isa isa : isas_under_test())
    for (const DirectConvKernel* kp : kernels::direct_conv_kernels(isa)) {
      const DirectConvKernel& k = *kp;
      for (const Activation& act : every_activation()) {
        const ConvGeometry s = conv_shape(3, 11, 61, 6, 1, 3, 2, 1, 1, 1, 1);  // 31 columns
        if (!check(k, s, 2, true, act, seed++)) return;
      }
    }
}

}  // namespace
}  // namespace minfer::test
