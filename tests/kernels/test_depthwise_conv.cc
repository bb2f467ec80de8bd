// The direct depthwise kernels of every target under test (isas_under_test()), per plane
// and channels in lanes, against the scalar reference (ops/reference/depthwise_conv.h)
// followed by the activation element by element, over edge shapes, every padding, both
// strides, 1 and 2 threads; and the two forms against each other, bit for bit.
#include <gtest/gtest.h>

#include "ops/kernels/depthwise_conv.h"
#include "ops/reference/depthwise_conv.h"
#include "tests/isa_test_util.h"
#include "tests/kernels/conv_kernel_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

using kernels::DepthwiseKernel;

std::vector<float> reference_result(const ConvGeometry& s, int64_t batch, const std::vector<float>& x,
                                    const std::vector<float>& wt, const float* bias, const Activation& act) {
  const int64_t in_image = s.cin * s.h * s.w, out_image = s.cout * s.out_h * s.out_w;
  std::vector<float> y(batch * out_image);
  for (int64_t n = 0; n < batch; ++n)
    reference::depthwise_conv2d(s, x.data() + n * in_image, wt.data(), bias, y.data() + n * out_image);
  for (float& v : y) v = act.apply(v);
  return y;
}

// The kernel's output in NCHW, from x in NCHW: layouts say which tensors the kernel itself
// reads or writes in NCHWc (the test reorders them).
std::vector<float> kernel_result(const DepthwiseKernel& k, const ConvGeometry& s, int64_t batch,
                                 const std::vector<float>& x, const std::vector<float>& wt, const float* bias,
                                 const Activation& act, int threads, kernels::BlockedLayouts layouts = {}) {
  const int64_t in_pixels = s.h * s.w, out_pixels = s.out_h * s.out_w;
  const std::vector<float> xin = layouts.input_blocked ? reorder_nchwc(x, batch, s.cin, in_pixels, k.lanes, true) : x;
  std::vector<float> y(batch * s.cout * out_pixels, NAN);
  const KeptScratch kept(threads, kernels::depthwise_thread_floats(k, s));
  kernels::depthwise_conv2d(k, s, batch, xin.data(), wt.data(), bias, y.data(), kept.own, threads, act, layouts);
  return layouts.output_blocked ? reorder_nchwc(y, batch, s.cout, out_pixels, k.lanes, false) : y;
}

// Runs kernel `k` on s and checks it against the reference, for 1 and 2 threads (whose
// results must be identical). Returns whether it passed, so sweeps can stop early.
bool check(const DepthwiseKernel& k, const ConvGeometry& s, int64_t batch, bool with_bias, const Activation& act,
           uint32_t seed) {
  const std::vector<float> x = random_values(batch * s.cin * s.h * s.w, seed);
  const std::vector<float> wt = random_values(s.cout * s.win.kh * s.win.kw, seed + 1);
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

TEST(DepthwiseKernels, EveryTargetHasTheSixWindowsAndTheSimdTargetsInLanesToo) {
  const std::vector<std::string> windows = {"3x3s1", "3x3s2", "5x5s1", "5x5s2", "7x7s1", "7x7s2"};
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    std::vector<std::string> names;
    for (const DepthwiseKernel& k : kernels::depthwise_kernels(isa)) {
      names.push_back(k.name);
      EXPECT_EQ(k.channels_in_lanes, names.size() > windows.size()) << k.name;
      EXPECT_EQ(std::string(k.name).find(fmt::format("{0}x{0}s{1}", k.kernel_size, k.stride)), 14u) << k.name;
    }
    const std::string t = isa_name(isa);
    std::vector<std::string> expected;
    for (const std::string& w : windows) expected.push_back(fmt::format("depthwise_f32_{}_{}", w, t));
    if (isa != Isa::kScalar)
      for (const std::string& w : windows) expected.push_back(fmt::format("depthwise_f32_{}_lanes_{}", w, t));
    EXPECT_EQ(names, expected);
  }
  EXPECT_EQ(kernels::depthwise_kernels(Isa::kAvx2)[0].lanes, 8);
  EXPECT_EQ(kernels::depthwise_kernels(Isa::kAvx2)[6].lanes, 8);
  EXPECT_EQ(kernels::depthwise_kernels(Isa::kAvx512)[0].lanes, 16);
  EXPECT_EQ(kernels::depthwise_kernels(Isa::kAvx512)[6].lanes, 16);
  EXPECT_EQ(kernels::depthwise_kernels(Isa::kScalar)[0].lanes, 1);
}

TEST(DepthwiseKernels, CoverOnlyTheirWindows) {
  auto name = [](const ConvGeometry& s, Isa isa) {
    const DepthwiseKernel* k = kernels::find_depthwise_kernel(s, isa);
    return k ? std::string(k->name) : std::string("reference");
  };
  EXPECT_EQ(name(conv_shape(8, 9, 9, 8, 8, 3, 1, 1, 1, 1, 1), Isa::kScalar), "depthwise_f32_3x3s1_scalar");
  EXPECT_EQ(name(conv_shape(8, 9, 9, 8, 8, 5, 2, 2, 2, 2, 2), Isa::kScalar), "depthwise_f32_5x5s2_scalar");
  EXPECT_EQ(name(conv_shape(8, 9, 9, 16, 8, 3, 1, 1, 1, 1, 1), Isa::kScalar), "reference");    // multiplier 2
  EXPECT_EQ(name(conv_shape(8, 9, 9, 8, 8, 3, 1, 2, 2, 2, 2, 2), Isa::kScalar), "reference");  // dilation 2
  EXPECT_EQ(name(conv_shape(8, 9, 9, 8, 8, 7, 1, 3, 3, 3, 3), Isa::kScalar), "depthwise_f32_7x7s1_scalar");
  EXPECT_EQ(name(conv_shape(8, 9, 9, 8, 8, 9, 1, 4, 4, 4, 4), Isa::kScalar), "reference");  // 9x9
  EXPECT_EQ(name(conv_shape(8, 9, 9, 8, 8, 3, 3, 1, 1, 1, 1), Isa::kScalar), "reference");  // stride 3
  EXPECT_EQ(name(conv_shape(8, 9, 9, 8, 4, 3, 1, 1, 1, 1, 1), Isa::kScalar), "reference");  // grouped
  ConvGeometry rect = conv_shape(8, 9, 9, 8, 8, 3, 1, 1, 1, 1, 1);
  rect.win.kw = 5;
  EXPECT_EQ(name(rect, Isa::kScalar), "reference");
  ConvGeometry mixed_stride = conv_shape(8, 9, 9, 8, 8, 3, 1, 1, 1, 1, 1);
  mixed_stride.win.sw = 2;
  EXPECT_EQ(name(mixed_stride, Isa::kScalar), "reference");
  if (isa_runnable(Isa::kAvx2)) {
    EXPECT_EQ(name(conv_shape(8, 9, 9, 8, 8, 3, 2, 1, 1, 1, 1), Isa::kAvx2), "depthwise_f32_3x3s2_lanes_avx2");
    // 3x3 stride 1 on planes that fill 8 output columns per vector: per plane.
    EXPECT_EQ(name(conv_shape(8, 56, 56, 8, 8, 3, 1, 1, 1, 1, 1), Isa::kAvx2), "depthwise_f32_3x3s1_avx2");
    EXPECT_EQ(name(conv_shape(8, 28, 28, 8, 8, 3, 1, 1, 1, 1, 1), Isa::kAvx2), "depthwise_f32_3x3s1_lanes_avx2");
    EXPECT_EQ(name(conv_shape(8, 56, 56, 8, 8, 5, 1, 2, 2, 2, 2), Isa::kAvx2), "depthwise_f32_5x5s1_lanes_avx2");
    EXPECT_EQ(name(conv_shape(8, 56, 56, 8, 8, 7, 1, 3, 3, 3, 3), Isa::kAvx2), "depthwise_f32_7x7s1_lanes_avx2");
  }
  if (isa_runnable(Isa::kAvx512)) {
    EXPECT_EQ(name(conv_shape(8, 112, 112, 8, 8, 3, 1, 1, 1, 1, 1), Isa::kAvx512), "depthwise_f32_3x3s1_avx512");
    EXPECT_EQ(name(conv_shape(8, 56, 56, 8, 8, 3, 1, 1, 1, 1, 1), Isa::kAvx512), "depthwise_f32_3x3s1_lanes_avx512");
    EXPECT_EQ(name(conv_shape(8, 112, 112, 8, 8, 3, 2, 1, 1, 1, 1), Isa::kAvx512), "depthwise_f32_3x3s2_lanes_avx512");
  } else {
    EXPECT_EQ(name(conv_shape(8, 9, 9, 8, 8, 3, 1, 1, 1, 1, 1), Isa::kAvx512), "reference");
  }
}

// Every padding 0..k-1 on each side independently, over widths below, at and around the
// vector widths (8 and 16) and heights down to 1.
TEST(DepthwiseKernels, MatchReferenceOverEveryPadding) {
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{1, 1}, {1, 7}, {6, 1}, {5, 8}, {7, 9}, {4, 17}, {3, 33}};
  uint32_t seed = 1;
  for (Isa isa : isas_under_test())
    for (const DepthwiseKernel& k : kernels::depthwise_kernels(isa))
      for (auto [h, w] : sizes)
        for (int64_t pt = 0; pt < k.kernel_size; ++pt)
          for (int64_t pl = 0; pl < k.kernel_size; ++pl)
            for (int64_t pb = 0; pb < k.kernel_size; ++pb)
              for (int64_t pr = 0; pr < k.kernel_size; ++pr) {
                const ConvGeometry s = conv_shape(3, h, w, 3, 3, k.kernel_size, k.stride, pt, pl, pb, pr);
                if (!window_fits(s)) continue;
                const DepthwiseKernel* found = kernels::find_depthwise_kernel(s, isa);
                ASSERT_TRUE(found && found->kernel_size == k.kernel_size && found->stride == k.stride);
                if (!check(k, s, 1, true, {}, seed++)) return;
              }
}

// Larger planes (several vectors and a tail per row), odd channel counts, batch > 1.
TEST(DepthwiseKernels, MatchReferenceOnLargerPlanesAndBatches) {
  struct Case {
    int64_t batch, channels, h, w;
  };
  const std::vector<Case> cases = {{2, 5, 23, 41}, {3, 7, 16, 16}, {1, 1, 40, 57}, {2, 3, 2, 100}};
  uint32_t seed = 1000;
  for (Isa isa : isas_under_test())
    for (const DepthwiseKernel& k : kernels::depthwise_kernels(isa))
      for (const Case& c : cases)
        for (bool bias : {false, true}) {
          const int64_t p = k.kernel_size / 2;
          const ConvGeometry s = conv_shape(c.channels, c.h, c.w, c.channels, c.channels, k.kernel_size, k.stride, p, p,
                                            p + (c.h % 2), p - 1);
          if (!check(k, s, c.batch, bias, {}, seed++)) return;
        }
}

// The late layers' planes (7x7 runs the flat-plane path at stride 1 on the SIMD
// targets, 14x14 and 28x28 the row path), symmetric and asymmetric padding, with every
// fused activation; 1 and 2 threads give the same bits (check()).
TEST(DepthwiseKernels, MatchReferenceOnLateLayerPlanesWithEveryActivation) {
  uint32_t seed = 3000;
  for (Isa isa : isas_under_test())
    for (const DepthwiseKernel& k : kernels::depthwise_kernels(isa))
      for (int64_t size : {7, 14, 28})
        for (bool asymmetric : {false, true})
          for (const Activation& act : every_activation()) {
            const int64_t p = k.kernel_size / 2;
            const ConvGeometry s = asymmetric ? conv_shape(5, size, size, 5, 5, k.kernel_size, k.stride, p - 1, p, p, 0)
                                              : conv_shape(5, size, size, 5, 5, k.kernel_size, k.stride, p, p, p, p);
            if (!check(k, s, 2, true, act, seed++)) return;
          }
}

TEST(DepthwiseKernels, ApplyBiasAndEveryActivationInTheEpilogue) {
  uint32_t seed = 2000;
  for (Isa isa : isas_under_test())
    for (const DepthwiseKernel& k : kernels::depthwise_kernels(isa))
      for (const Activation& act : every_activation()) {
        // 19 columns: two vectors and a tail for AVX2, one and a tail for AVX-512.
        const ConvGeometry s =
            conv_shape(3, 9, 19 * k.stride, 3, 3, k.kernel_size, k.stride, 1, 1, 1, k.kernel_size - 1);
        if (!check(k, s, 2, true, act, seed++)) return;
      }
}

// The channels-in-lanes kernels where their groups of channels and bands of rows have
// edges: channel counts below, between and above whole groups of 8 and 16 (5, 17, 40),
// late-layer, odd and prime planes, asymmetric padding, batch 2, with and without bias,
// every activation; and planes large enough for several bands (112 wide) and two
// threads (check() compares 1 and 2 threads bit for bit).
TEST(DepthwiseKernels, ChannelsInLanesMatchReferenceAcrossGroupsAndBands) {
  struct Case {
    int64_t channels, h, w;
  };
  const std::vector<Case> cases = {{5, 7, 7}, {17, 14, 14}, {40, 9, 13}, {17, 28, 28}, {3, 112, 112}};
  uint32_t seed = 5000;
  for (Isa isa : isas_under_test())
    for (const DepthwiseKernel& k : kernels::depthwise_kernels(isa)) {
      if (!k.channels_in_lanes) continue;
      for (const Case& c : cases)
        for (bool asymmetric : {false, true})
          for (bool bias : {false, true}) {
            const int64_t p = k.kernel_size / 2;
            const ConvGeometry s = asymmetric ? conv_shape(c.channels, c.h, c.w, c.channels, c.channels, k.kernel_size,
                                                           k.stride, p, p - 1, p - 1, p + 1)
                                              : conv_shape(c.channels, c.h, c.w, c.channels, c.channels, k.kernel_size,
                                                           k.stride, p, p, p, p);
            if (!check(k, s, 2, bias, {}, seed++)) return;
          }
      for (const Activation& act : every_activation())
        if (!check(k, conv_shape(17, 14, 14, 17, 17, k.kernel_size, k.stride, 1, 2, 2, 1), 2, true, act, seed++))
          return;
    }
}

// NCHWc input, output or both (c = the blocked layout's lanes, the vector's): the same
// bits as NCHW in and out, which match the reference, over whole blocks of channels (1
// and 3), padded and unpadded (asymmetric pads, one wider than the window: pixels whose
// taps are all outside), odd, late-layer and banded (112 wide) planes, planes whose
// NCHWc input is read without the tile and with it (reads_in_place: 3x3 windows on the
// tall one with asymmetric pads, of more than 56x56 pixels, take the former on both
// targets into either output layout; 5x5 and 7x7 ones on the small planes the latter),
// rows of every length of run from 1 to past a vector's lanes, every activation, batch 2,
// 1 and 2 threads; only the channels-in-lanes kernels take NCHWc, and only on channels in
// whole blocks.
TEST(DepthwiseKernels, ChannelsInLanesReadAndWriteNchwc) {
  struct Case {
    int64_t blocks, h, w, pt, pl, pb, pr;
  };
  const std::vector<Case> cases = {{1, 7, 7, 1, 1, 1, 1},   {3, 13, 9, 1, 1, 1, 1}, {1, 112, 112, 1, 1, 1, 1},
                                   {2, 14, 14, 0, 0, 0, 0}, {1, 1, 1, 2, 2, 2, 2},  {1, 9, 47, 0, 3, 2, 0},
                                   {1, 11, 6, 4, 0, 0, 4},  {1, 70, 47, 0, 3, 2, 0}};
  uint32_t seed = 9000;
  for (Isa isa : isas_under_test())
    for (const DepthwiseKernel& k : kernels::depthwise_kernels(isa)) {
      if (isa == Isa::kScalar) {  // no NCHWc kernel
        EXPECT_EQ(kernels::find_depthwise_kernel(conv_shape(8, 9, 9, 8, 8, 3, 1, 1, 1, 1, 1), isa, {true, true}),
                  nullptr);
        continue;
      }
      const ConvGeometry odd =
          conv_shape(k.lanes + 1, 9, 9, k.lanes + 1, k.lanes + 1, k.kernel_size, k.stride, 1, 1, 1, 1);
      const ConvGeometry whole = conv_shape(k.lanes, 9, 9, k.lanes, k.lanes, k.kernel_size, k.stride, 1, 1, 1, 1);
      EXPECT_EQ(kernels::find_depthwise_kernel(odd, isa, {true, true}), nullptr) << k.name;
      const DepthwiseKernel* blocked = kernels::find_depthwise_kernel(whole, isa, {true, false});
      ASSERT_NE(blocked, nullptr) << k.name;
      EXPECT_TRUE(blocked->channels_in_lanes);
      if (!k.channels_in_lanes) continue;
      ASSERT_EQ(k.lanes, blocked->lanes);
      for (const Case& c : cases)
        for (const Activation& act : every_activation()) {
          const int64_t ch = c.blocks * k.lanes;
          const ConvGeometry s = conv_shape(ch, c.h, c.w, ch, ch, k.kernel_size, k.stride, c.pt, c.pl, c.pb, c.pr);
          if (!window_fits(s)) continue;
          const std::vector<float> x = random_values(2 * s.cin * s.h * s.w, seed);
          const std::vector<float> wt = random_values(s.cout * s.win.kh * s.win.kw, seed + 1);
          const std::vector<float> b = random_values(s.cout, seed + 2);
          seed += 3;
          const std::vector<float> nchw = kernel_result(k, s, 2, x, wt, b.data(), act, 1);
          ASSERT_LT(max_rel_error(nchw, reference_result(s, 2, x, wt, b.data(), act)), 1e-5)
              << k.name << " " << describe(s, 2);
          for (const kernels::BlockedLayouts layouts :
               {kernels::BlockedLayouts{true, false}, kernels::BlockedLayouts{false, true},
                kernels::BlockedLayouts{true, true}})
            for (int threads : {1, 2})
              ASSERT_EQ(kernel_result(k, s, 2, x, wt, b.data(), act, threads, layouts), nchw)
                  << k.name << " " << describe(s, 2) << " input NCHWc " << layouts.input_blocked << " output NCHWc "
                  << layouts.output_blocked << " threads " << threads << " activation " << static_cast<int>(act.kind);
        }
    }
}

// Dilated windows (DeepLabV3's backbone: 3x3 and 5x5 at dilation 2, stride 1) run the
// channels-in-lanes kernels, NCHW and NCHWc, against the reference: dilations 2 and 3,
// "same" and asymmetric padding, padding wider than the plane, planes large enough for
// bands (112 wide), 1 and 2 threads; the per-plane kernels never take them.
TEST(DepthwiseKernels, DilatedWindowsRunChannelsInLanes) {
  struct Case {
    int64_t channels, h, w;
  };
  const std::vector<Case> cases = {{17, 14, 14}, {16, 9, 23}, {5, 3, 4}, {3, 112, 112}};
  uint32_t seed = 11000;
  for (Isa isa : isas_under_test())
    for (const DepthwiseKernel& k : kernels::depthwise_kernels(isa))
      for (int64_t d : {2, 3}) {
        const int64_t p = d * (k.kernel_size / 2);
        const ConvGeometry same = conv_shape(8, 14, 14, 8, 8, k.kernel_size, k.stride, p, p, p, p, d);
        const DepthwiseKernel* found = kernels::find_depthwise_kernel(same, isa);
        if (isa == Isa::kScalar) {
          EXPECT_EQ(found, nullptr) << k.name;
          continue;
        }
        ASSERT_NE(found, nullptr) << k.name;
        EXPECT_TRUE(found->channels_in_lanes) << found->name;
        EXPECT_EQ(found->kernel_size, k.kernel_size);
        EXPECT_EQ(found->stride, k.stride);
        if (!k.channels_in_lanes) continue;
        for (const Case& c : cases)
          for (bool asymmetric : {false, true}) {
            const ConvGeometry s = asymmetric ? conv_shape(c.channels, c.h, c.w, c.channels, c.channels, k.kernel_size,
                                                           k.stride, p + 3, p - 1, 0, p + 2, d)
                                              : conv_shape(c.channels, c.h, c.w, c.channels, c.channels, k.kernel_size,
                                                           k.stride, p, p, p, p, d);
            if (!window_fits(s)) continue;
            if (!check(k, s, 2, asymmetric, asymmetric ? Activation{ActivationKind::kRelu} : Activation{}, seed++))
              return;
          }
        const int64_t ch = 2 * k.lanes;
        const ConvGeometry s = conv_shape(ch, 13, 11, ch, ch, k.kernel_size, k.stride, p, p, p, p, d);
        const std::vector<float> x = random_values(2 * s.cin * s.h * s.w, seed);
        const std::vector<float> wt = random_values(s.cout * s.win.kh * s.win.kw, seed + 1);
        const std::vector<float> b = random_values(s.cout, seed + 2);
        seed += 3;
        const std::vector<float> nchw = kernel_result(k, s, 2, x, wt, b.data(), {}, 1);
        ASSERT_LT(max_rel_error(nchw, reference_result(s, 2, x, wt, b.data(), {})), 1e-5) << k.name;
        for (int threads : {1, 2})
          EXPECT_EQ(kernel_result(k, s, 2, x, wt, b.data(), {}, threads, {true, true}), nchw)
              << k.name << " NCHWc, threads " << threads;
      }
}

// A large plane runs in several bands of output rows (the lanes kernel's tile has a
// cache budget): the first, middle and last bands each have their own padding rows.
TEST(DepthwiseKernels, LargePlanesRunInBands) {
  for (Isa isa : isas_under_test())
    for (const DepthwiseKernel& k : kernels::depthwise_kernels(isa))
      if (k.channels_in_lanes) {
        const int64_t p = k.kernel_size / 2;
        const kernels::LaneLayout lay =
            kernels::lane_layout(conv_shape(3, 112, 112, 3, 3, k.kernel_size, k.stride, p, p, p, p), k.lanes);
        EXPECT_GT(lay.bands, 2) << k.name;
        EXPECT_EQ(lay.bands, (112 / k.stride + lay.band_rows - 1) / lay.band_rows) << k.name;
      }
}

// The two forms sum each output's taps in the same order and apply the same activation
// code, so they agree bit for bit (a model's output does not depend on which one a layer
// was given).
TEST(DepthwiseKernels, ChannelsInLanesGiveThePerPlaneBits) {
  uint32_t seed = 7000;
  for (Isa isa : isas_under_test())
    for (const DepthwiseKernel& lanes : kernels::depthwise_kernels(isa)) {
      if (!lanes.channels_in_lanes) continue;
      const DepthwiseKernel& plane =
          kernels::depthwise_kernels(isa)[&lanes - kernels::depthwise_kernels(isa).data() - kernels::kDepthwiseWindows];
      ASSERT_EQ(plane.kernel_size, lanes.kernel_size);
      ASSERT_EQ(plane.stride, lanes.stride);
      for (int64_t size : {7, 14, 20})
        for (const Activation& act : every_activation()) {
          const ConvGeometry s = conv_shape(19, size, size, 19, 19, lanes.kernel_size, lanes.stride, 1, 2, 2, 1);
          const std::vector<float> x = random_values(2 * s.cin * s.h * s.w, seed);
          const std::vector<float> wt = random_values(s.cout * s.win.kh * s.win.kw, seed + 1);
          const std::vector<float> b = random_values(s.cout, seed + 2);
          seed += 3;
          EXPECT_EQ(kernel_result(lanes, s, 2, x, wt, b.data(), act, 1),
                    kernel_result(plane, s, 2, x, wt, b.data(), act, 1))
              << lanes.name << " " << describe(s, 2) << " activation " << static_cast<int>(act.kind);
        }
    }
}

}  // namespace
}  // namespace minfer::test
