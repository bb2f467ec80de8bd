// The blocked NCHWc convolution of every SIMD target under test (isas_under_test()),
// against a plain seven-loop convolution written here followed by the activation element
// by element: channel counts that are not multiples of the block (3, 17, 40) or fewer
// than one (3, 5, 12: an input copy of that many lanes), windows
// 1x1 to 7x7, strides 1 to 3, dilation, asymmetric pads, batches, groups of whole
// blocks, every activation, bias or none; 1 and 2 threads must agree bit for bit. Every
// 3x3 stride-1 case runs by the direct sums and by Winograd F(2x2, 3x3).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ops/kernels/blocked_conv.h"
#include "tests/isa_test_util.h"
#include "tests/kernels/conv_kernel_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

// The workspace of `conv` for `batch` images on `threads` threads and a piece of its kept
// scratch for each thread, all NaN.
struct Scratch {
  Scratch(const kernels::BlockedConv& conv, int64_t batch, int threads)
      : workspace(conv.workspace_floats(batch, threads), NAN),
        kept(threads, conv.thread_floats(batch, threads)),
        own(kept.own) {}
  std::vector<float> workspace;
  KeptScratch kept;
  const ThreadScratch& own;
};

std::vector<float> blocked_result(const kernels::BlockedConv& conv, const ConvGeometry& s, int64_t batch,
                                  const std::vector<float>& x, const std::vector<float>& wt, const float* bias,
                                  const Activation& act, int threads) {
  std::vector<float> y(batch * s.cout * s.out_h * s.out_w, NAN);
  Scratch scratch(conv, batch, threads);
  conv.run(batch, x.data(), bias, act, y.data(), scratch.workspace, scratch.own, threads, nullptr, wt.data());
  return y;
}

// Random operands of a batch of s, from seeds seed to seed + 3: input, weights, bias and
// a residual shaped as the output.
struct Operands {
  std::vector<float> x, wt, b, r;
};

Operands random_operands(const ConvGeometry& s, int64_t batch, uint32_t seed) {
  return {random_values(batch * s.cin * s.h * s.w, seed),
          random_values(s.cout * s.cin_per_group() * s.win.kh * s.win.kw, seed + 1), random_values(s.cout, seed + 2),
          random_values(batch * s.cout * s.out_h * s.out_w, seed + 3)};
}

// The algorithms that can run s on isa: direct, and Winograd where it applies.
std::vector<kernels::BlockedAlgorithm> algorithms(const ConvGeometry& s, Isa isa) {
  if (kernels::winograd_applies(s, isa))
    return {kernels::BlockedAlgorithm::kDirect, kernels::BlockedAlgorithm::kWinograd};
  return {kernels::BlockedAlgorithm::kDirect};
}

const char* algorithm_name(kernels::BlockedAlgorithm a) {
  return a == kernels::BlockedAlgorithm::kWinograd ? "winograd" : "direct";
}

// Runs the blocked kernel of isa on s by each algorithm against the naive loop, for 1
// and 2 threads. Returns whether it passed, so sweeps stop at the first failure.
bool check(Isa isa, const ConvGeometry& s, int64_t batch, bool with_bias, const Activation& act, uint32_t seed) {
  const std::vector<float> x = random_values(batch * s.cin * s.h * s.w, seed);
  const std::vector<float> wt = random_values(s.cout * s.cin_per_group() * s.win.kh * s.win.kw, seed + 1);
  const std::vector<float> b = random_values(s.cout, seed + 2);
  const float* bias = with_bias ? b.data() : nullptr;
  const std::vector<float> expected = naive_conv(s, batch, x, wt, bias, act);
  // Float sums of K products drift from the double ones by about sqrt(K) roundings.
  const double k = double(s.cin_per_group() * s.win.kh * s.win.kw),
               tolerance = 1e-5 * std::max(1.0, std::sqrt(k / 100));
  for (kernels::BlockedAlgorithm algorithm : algorithms(s, isa)) {
    const kernels::BlockedConv conv(s, wt.data(), isa, {}, algorithm);
    const std::vector<float> one = blocked_result(conv, s, batch, x, wt, bias, act, 1);
    const std::vector<float> two = blocked_result(conv, s, batch, x, wt, bias, act, 2);
    const double err = max_rel_error(one, expected);
    EXPECT_LT(err, tolerance) << conv.kernel().name << " " << algorithm_name(algorithm) << " " << describe(s, batch)
                              << " bias " << with_bias << " activation " << static_cast<int>(act.kind);
    EXPECT_EQ(one, two) << conv.kernel().name << " " << describe(s, batch) << ": 2 threads differ from 1";
    if (err >= tolerance || one != two) return false;
  }
  return true;
}

std::vector<Isa> simd_isas() {
  std::vector<Isa> isas;
  for (Isa isa : isas_under_test())
    if (kernels::blocked_conv_kernel(isa)) isas.push_back(isa);
  return isas;
}

// Groups of whole blocks in any layout; in NCHW also groups whose output channels fill at
// least half of their own blocks (no more than twice the multiply-adds).
TEST(BlockedConvKernels, AppliesToGroupsOfWholeBlocksOrHalfFullOnesInNchw) {
  const ConvGeometry regular = conv_shape(17, 9, 9, 40, 1, 3, 1, 1, 1, 1, 1);
  const ConvGeometry groups16 = conv_shape(64, 9, 9, 64, 4, 3, 1, 1, 1, 1, 1);
  const ConvGeometry groups8 = conv_shape(32, 9, 9, 32, 4, 3, 1, 1, 1, 1, 1);
  const ConvGeometry groups4 = conv_shape(12, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1);
  const kernels::BlockedLayouts nchwc_in{true, false}, nchwc_out{false, true};
  EXPECT_FALSE(kernels::blocked_conv_applies(regular, Isa::kScalar));
  if (isa_runnable(Isa::kAvx2)) {
    EXPECT_TRUE(kernels::blocked_conv_applies(regular, Isa::kAvx2));
    EXPECT_TRUE(kernels::blocked_conv_applies(groups8, Isa::kAvx2));
    EXPECT_TRUE(kernels::blocked_conv_applies(groups8, Isa::kAvx2, nchwc_in));
    // 4 input channels per group as 4 lanes, 8 output channels a whole block.
    EXPECT_TRUE(kernels::blocked_conv_applies(conv_shape(12, 9, 9, 24, 3, 3, 1, 1, 1, 1, 1), Isa::kAvx2));
    EXPECT_TRUE(kernels::blocked_conv_applies(groups4, Isa::kAvx2));  // 4 of 8 output lanes
    EXPECT_FALSE(kernels::blocked_conv_applies(conv_shape(9, 9, 9, 9, 3, 3, 1, 1, 1, 1, 1), Isa::kAvx2));  // 3 of 8
  }
  if (isa_runnable(Isa::kAvx512)) {
    EXPECT_TRUE(kernels::blocked_conv_applies(groups16, Isa::kAvx512));
    EXPECT_TRUE(kernels::blocked_conv_applies(groups16, Isa::kAvx512, nchwc_out));
    EXPECT_TRUE(kernels::blocked_conv_applies(groups8, Isa::kAvx512));  // 8 of 16 output lanes
    EXPECT_TRUE(kernels::blocked_conv_applies(conv_shape(72, 9, 9, 72, 3, 3, 1, 1, 1, 1, 1), Isa::kAvx512));  // 24
    // The same groups in NCHWc: its blocks would straddle groups.
    EXPECT_FALSE(kernels::blocked_conv_applies(groups8, Isa::kAvx512, nchwc_in));
    EXPECT_FALSE(kernels::blocked_conv_applies(groups8, Isa::kAvx512, nchwc_out));
    EXPECT_FALSE(kernels::blocked_conv_applies(groups4, Isa::kAvx512));  // 4 of 16 output lanes
  } else {
    EXPECT_EQ(kernels::blocked_conv_kernel(Isa::kAvx512), nullptr);
  }
}

TEST(BlockedConvKernels, MatchNaiveLoopOverChannelsWindowsAndStrides) {
  struct Case {
    int64_t batch, cin, h, w, cout, k, stride, pt, pl, pb, pr;
  };
  const std::vector<Case> cases = {
      {1, 3, 9, 11, 5, 3, 1, 1, 1, 1, 1},    {2, 17, 10, 13, 40, 3, 1, 1, 1, 1, 1},
      {1, 40, 8, 8, 17, 3, 2, 1, 1, 1, 1},   {1, 17, 15, 30, 33, 1, 1, 0, 0, 0, 0},
      {1, 24, 16, 16, 20, 1, 2, 0, 0, 0, 0}, {1, 9, 14, 17, 70, 5, 1, 2, 2, 2, 2},
      {2, 5, 13, 21, 3, 7, 2, 3, 3, 3, 3},   {1, 17, 9, 25, 36, 3, 1, 0, 2, 1, 0},
      {1, 64, 7, 7, 72, 3, 1, 1, 1, 1, 1},   {1, 33, 11, 9, 16, 3, 3, 1, 0, 2, 1},
      {1, 16, 6, 1, 16, 3, 1, 1, 1, 1, 1},   {1, 16, 5, 60, 16, 3, 1, 1, 1, 1, 1},
      {1, 300, 5, 5, 20, 3, 1, 1, 1, 1, 1},  // several input chunks on both targets
  };
  uint32_t seed = 1;
  for (Isa isa : simd_isas())
    for (const Case& c : cases)
      for (bool bias : {false, true}) {
        const ConvGeometry s = conv_shape(c.cin, c.h, c.w, c.cout, 1, c.k, c.stride, c.pt, c.pl, c.pb, c.pr);
        ASSERT_TRUE(window_fits(s));
        if (!check(isa, s, c.batch, bias, {}, seed++)) return;
      }
}

TEST(BlockedConvKernels, MatchNaiveLoopWithDilationAndRectangularWindows) {
  uint32_t seed = 500;
  for (Isa isa : simd_isas()) {
    ConvGeometry s = conv_shape(20, 17, 19, 24, 1, 3, 1, 2, 2, 2, 2, 2);  // dilation 2
    if (!check(isa, s, 1, true, {}, seed++)) return;
    s = conv_shape(20, 17, 19, 24, 1, 3, 2, 1, 2, 2, 1, 2);  // stride 2, dilation 2
    if (!check(isa, s, 1, true, {}, seed++)) return;
    // Fewer input channels than a block: the input copy has that many lanes; with
    // dilation its taps are summed one by one, without as one run per window row.
    s = conv_shape(3, 17, 19, 24, 1, 3, 2, 2, 2, 2, 2, 2);
    if (!check(isa, s, 2, true, {}, seed++)) return;
    s = conv_shape(5, 16, 20, 40, 1, 7, 2, 3, 3, 3, 3);
    if (!check(isa, s, 1, true, {}, seed++)) return;
    s = conv_shape(12, 15, 31, 10, 1, 2, 1, 0, 1, 1, 2);  // 2x4 window
    s.win.kw = 4;
    s.out_w = (31 + 1 + 2 - 4) + 1;
    if (!check(isa, s, 1, false, {}, seed++)) return;
    // Window rows reading only the zero border, skipped row by row: DeepLabV3's dilation
    // 12 on a 14x14 map (most outputs read one window row of three), the same strided
    // with uneven pads, a map shorter than the dilation (some output rows read no row
    // at all: the bias alone), and a 5x5 window with a single input block.
    s = conv_shape(32, 14, 14, 24, 1, 3, 1, 12, 12, 12, 12, 12);
    if (!check(isa, s, 1, true, {}, seed++)) return;
    s = conv_shape(20, 14, 13, 24, 1, 3, 2, 13, 12, 9, 12, 11);
    if (!check(isa, s, 2, true, {}, seed++)) return;
    s = conv_shape(20, 3, 9, 17, 1, 3, 1, 6, 1, 6, 1, 5);
    if (!check(isa, s, 1, true, {}, seed++)) return;
    s = conv_shape(5, 9, 9, 16, 1, 5, 1, 6, 6, 6, 6, 3);
    if (!check(isa, s, 1, true, {}, seed++)) return;
  }
}

TEST(BlockedConvKernels, MatchNaiveLoopOnGroupsOfWholeBlocks) {
  uint32_t seed = 1000;
  for (Isa isa : simd_isas()) {
    const int64_t c = kernels::blocked_conv_kernel(isa)->lanes;
    for (int64_t group : {2, 3, 5})
      for (int64_t stride : {1, 2}) {
        // c and 2c input channels per group, c and 3c output channels per group.
        const ConvGeometry a = conv_shape(group * c, 12, 14, group * c, group, 3, stride, 1, 1, 1, 1);
        const ConvGeometry b = conv_shape(group * 2 * c, 9, 7, group * 3 * c, group, 3, stride, 1, 1, 1, 1);
        if (!check(isa, a, 2, true, {}, seed++)) return;
        if (!check(isa, b, 1, false, {}, seed++)) return;
      }
  }
}

// Groups whose channels are not whole blocks, in NCHW: each group's input channels copied
// as blocks of their own (fewer than a block: that many lanes; more: the last block part
// zeros), its output channels summed in blocks of their own and only the group's stored.
// RegNetY's 13 groups of 8 (half blocks on AVX-512, whole ones on AVX2), 3 groups of a
// block and a half in and out, 5 groups of half a block in and a whole one out, 2 groups
// of 3 lanes more than a block in and a block and a half out; strides, padding, dilation,
// 5x5 windows, bias or none, an activation.
TEST(BlockedConvKernels, MatchNaiveLoopOnGroupsOfPartBlocks) {
  uint32_t seed = 1500;
  for (Isa isa : simd_isas()) {
    const int64_t c = kernels::blocked_conv_kernel(isa)->lanes;
    const int64_t half = c / 2, one_half = c + c / 2;
    for (int64_t stride : {1, 2}) {
      const ConvGeometry shapes[] = {
          conv_shape(13 * 8, 11, 13, 13 * 8, 13, 3, stride, 1, 1, 1, 1),
          conv_shape(3 * one_half, 9, 10, 3 * one_half, 3, 3, stride, 1, 1, 1, 1),
          conv_shape(5 * half, 8, 7, 5 * c, 5, 3, stride, 0, 1, 2, 1),
          conv_shape(2 * (c + 3), 12, 9, 2 * one_half, 2, 5, stride, 2, 1, 1, 1),
          conv_shape(2 * (c + 3), 12, 9, 2 * one_half, 2, 3, stride, 2, 2, 1, 2, 2),
      };
      for (const ConvGeometry& s : shapes) {
        ASSERT_TRUE(kernels::blocked_conv_applies(s, isa)) << describe(s, 1);
        if (!check(isa, s, 2, true, {ActivationKind::kRelu}, seed++)) return;
        if (!check(isa, s, 1, false, {}, seed++)) return;
      }
    }
  }
}

// The activation once, on the finished sums: on the registers of the last chunk of input
// blocks for the kinds the tiles apply, on the band after for the others; 300 input
// channels are several chunks on both targets, where an activation of a partial sum
// would show.
TEST(BlockedConvKernels, ApplyBiasAndEveryActivation) {
  uint32_t seed = 2000;
  for (Isa isa : simd_isas())
    for (const Activation& act : every_activation())
      for (const ConvGeometry& s :
           {conv_shape(19, 11, 13, 21, 1, 3, 2, 1, 1, 1, 1), conv_shape(300, 5, 5, 20, 1, 3, 1, 1, 1, 1, 1)})
        if (!check(isa, s, 2, true, act, seed++)) return;
}

// NCHWc input, output or both (c = the target's lanes): the same sums as NCHW, with a
// bias, every activation once, a residual (in its own buffer and as the output's own,
// laid out as the output), padding or none (an NCHWc input without padding is read in
// place), groups of whole blocks, several input chunks.
TEST(BlockedConvKernels, MatchNaiveLoopInEveryLayout) {
  uint32_t seed = 3000;
  for (Isa isa : simd_isas()) {
    const int64_t c = kernels::blocked_conv_kernel(isa)->lanes;
    const std::vector<ConvGeometry> shapes = {
        conv_shape(2 * c, 11, 13, 3 * c, 1, 3, 1, 1, 1, 1, 1), conv_shape(c, 9, 10, 2 * c, 1, 1, 1, 0, 0, 0, 0),
        conv_shape(3 * c, 12, 9, c, 1, 3, 2, 1, 0, 1, 1), conv_shape(2 * c, 8, 8, 6 * c, 2, 3, 1, 1, 1, 1, 1),
        conv_shape(40 * c, 5, 6, 2 * c, 1, 1, 1, 0, 0, 0, 0), conv_shape(c, 7, 7, c, 1, 1, 2, 0, 0, 0, 0),
        // 3x3 stride 1 (Winograd too): odd planes, pads of 0 to 2, no padding, a 1x1
        // plane, output blocks past one tile of them (split between two threads).
        conv_shape(c, 3, 4, 5 * c, 1, 3, 1, 0, 2, 2, 1), conv_shape(3 * c, 10, 7, c, 1, 3, 1, 0, 0, 0, 0),
        conv_shape(c, 1, 1, 2 * c, 1, 3, 1, 1, 1, 1, 1),
        conv_shape(4 * c, 7, 9, 4 * c, 4, 3, 1, 1, 1, 1, 1),  // a block per group (RegNet's), chunks across groups
    };
    const std::vector<Activation> acts = every_activation();
    size_t a = 0;
    for (const ConvGeometry& s : shapes)
      for (kernels::BlockedAlgorithm algorithm : algorithms(s, isa))
        for (int layout = 1; layout < 4; ++layout)
          for (int residual = 0; residual < 3; ++residual) {
            const kernels::BlockedLayouts layouts{(layout & 1) != 0, (layout & 2) != 0};
            ASSERT_TRUE(kernels::blocked_conv_applies(s, isa, layouts));
            const Activation act = acts[a++ % acts.size()];
            const int64_t batch = 2, in_pixels = s.h * s.w, out_pixels = s.out_h * s.out_w;
            const auto [x, wt, b, r] = random_operands(s, batch, seed);
            seed += 4;
            std::vector<float> expected = naive_conv(s, batch, x, wt, b.data(), {});
            if (residual)
              for (size_t i = 0; i < expected.size(); ++i) expected[i] += r[i];
            act.apply(expected.data(), static_cast<int64_t>(expected.size()));
            const kernels::BlockedConv conv(s, wt.data(), isa, layouts, algorithm);
            // The unpadded 1x1 stride-1 layers here (whole blocks) read NCHW in place too.
            if (s.win.kh * s.win.kw == 1 && s.win.sh == 1) {
              EXPECT_EQ(conv.input_copy_floats(batch, 1), 0);
            }
            const std::vector<float> xin =
                layouts.input_blocked ? reorder_nchwc(x, batch, s.cin, in_pixels, c, true) : x;
            const std::vector<float> rin =
                layouts.output_blocked ? reorder_nchwc(r, batch, s.cout, out_pixels, c, true) : r;
            std::vector<float> outputs[2];
            for (int threads : {1, 2}) {
              std::vector<float> y = residual == 2 ? rin : std::vector<float>(expected.size(), NAN);
              Scratch scratch(conv, batch, threads);
              conv.run(batch, xin.data(), b.data(), act, y.data(), scratch.workspace, scratch.own, threads,
                       residual == 1   ? rin.data()
                       : residual == 2 ? y.data()
                                       : nullptr,
                       wt.data());
              outputs[threads - 1] = layouts.output_blocked ? reorder_nchwc(y, batch, s.cout, out_pixels, c, false) : y;
            }
            const double err = max_rel_error(outputs[0], expected);
            ASSERT_LT(err, 1e-4) << conv.kernel().name << " " << algorithm_name(algorithm) << " " << describe(s, batch)
                                 << " input NCHWc " << layouts.input_blocked << " output NCHWc "
                                 << layouts.output_blocked << " residual " << residual << " activation "
                                 << static_cast<int>(act.kind);
            ASSERT_EQ(outputs[0], outputs[1]) << describe(s, batch) << ": 2 threads differ from 1";
          }
  }
}

// A team splits the direct sums by output rows where each thread gets four or more, or
// two and a split by blocks would have too few items (Winograd: two bands of tile rows
// or more), each thread copying the zero-bordered input rows its windows read, unless
// the weights are four times the input or more; else by tiles of output blocks. Threads
// done with their share take the others' items. Either way every output is summed in
// the one thread's order: 1, 2 and 3 threads give the same bits, in every layout, with
// padding, strides, dilation and a residual.
TEST(BlockedConvKernels, TeamsSplitRowsOrBlocksWithTheSameBits) {
  uint32_t seed = 3500;
  for (Isa isa : simd_isas()) {
    const int64_t c = kernels::blocked_conv_kernel(isa)->lanes;
    struct Case {
      ConvGeometry s;
      bool by_rows;  // on two threads
      kernels::BlockedAlgorithm algorithm = kernels::BlockedAlgorithm::kDirect;
      ActivationKind act = ActivationKind::kRelu;
    };
    const std::vector<Case> cases = {
        // 7 rows: by rows with one or two tiles of output blocks, by blocks with 8 or more.
        {conv_shape(2 * c, 13, 12, 4 * c, 1, 3, 2, 1, 0, 2, 1), true},  // stride 2, uneven pads
        {conv_shape(2 * c, 7, 9, 32 * c, 1, 1, 1, 0, 0, 0, 0), false},
        {conv_shape(2 * c, 14, 11, 3 * c, 1, 3, 1, 2, 2, 2, 2, 2), true},  // dilation 2
        {conv_shape(4 * c, 9, 10, 8 * c, 1, 1, 1, 0, 0, 0, 0), true},      // NCHWc read in place
        {conv_shape(4 * c, 3, 20, 8 * c, 1, 3, 1, 1, 1, 1, 1), false},     // 3 rows: by blocks
        // 7 rows and too few tiles to even out, but weights 4 times the input or more
        // (144 c^2 floats against 98 c): by blocks, each thread reading its share of them.
        {conv_shape(2 * c, 7, 7, 8 * c, 1, 3, 1, 1, 1, 1, 1), false},
        // Winograd: 100 columns make each band one tile row; four (the last one row
        // high) are two a thread, by rows; three split their output blocks, each thread a
        // chunk of every band, as a 12x12 plane's one band does.
        {conv_shape(4 * c, 7, 100, 4 * c, 1, 3, 1, 1, 1, 1, 1), true, kernels::BlockedAlgorithm::kWinograd},
        {conv_shape(4 * c, 5, 100, 8 * c, 1, 3, 1, 1, 1, 1, 1), false, kernels::BlockedAlgorithm::kWinograd},
        {conv_shape(2 * c, 12, 12, 8 * c, 1, 3, 1, 1, 1, 1, 1), false, kernels::BlockedAlgorithm::kWinograd},
        // Five tile rows of 50 tiles in six bands on two threads: an NCHWc output's bands
        // end within tile rows, and Tanh, applied after the output transform (not on the
        // registers) and not idempotent, must reach each band's tiles once.
        {conv_shape(4 * c, 9, 100, 4 * c, 1, 3, 1, 1, 1, 1, 1), true, kernels::BlockedAlgorithm::kWinograd,
         ActivationKind::kTanh},
    };
    for (const Case& k : cases) {
      const ConvGeometry& s = k.s;
      const int64_t batch = 2, in_pixels = s.h * s.w, out_pixels = s.out_h * s.out_w;
      const auto [x, wt, b, r] = random_operands(s, batch, seed);
      seed += 4;
      std::vector<float> expected = naive_conv(s, batch, x, wt, b.data(), {});
      for (size_t i = 0; i < expected.size(); ++i) expected[i] += r[i];
      const Activation act{k.act};
      act.apply(expected.data(), static_cast<int64_t>(expected.size()));
      for (int layout = 0; layout < 4; ++layout) {
        const kernels::BlockedLayouts layouts{(layout & 1) != 0, (layout & 2) != 0};
        const kernels::BlockedConv conv(s, wt.data(), isa, layouts, k.algorithm);
        EXPECT_EQ(conv.splits_rows(2), k.by_rows) << describe(s, batch);
        EXPECT_FALSE(conv.splits_rows(1));
        const std::vector<float> xin = layouts.input_blocked ? reorder_nchwc(x, batch, s.cin, in_pixels, c, true) : x;
        const std::vector<float> rin =
            layouts.output_blocked ? reorder_nchwc(r, batch, s.cout, out_pixels, c, true) : r;
        std::vector<float> outputs[3];
        for (int threads : {1, 2, 3}) {
          std::vector<float> y(expected.size(), NAN);
          Scratch scratch(conv, batch, threads);
          conv.run(batch, xin.data(), b.data(), act, y.data(), scratch.workspace, scratch.own, threads, rin.data(),
                   wt.data());
          outputs[threads - 1] = layouts.output_blocked ? reorder_nchwc(y, batch, s.cout, out_pixels, c, false) : y;
        }
        SCOPED_TRACE(testing::Message() << conv.kernel().name << " " << describe(s, batch) << " input NCHWc "
                                        << layouts.input_blocked << " output NCHWc " << layouts.output_blocked);
        ASSERT_LT(max_rel_error(outputs[0], expected), 1e-4);
        ASSERT_EQ(outputs[0], outputs[1]) << "2 threads differ from 1";
        ASSERT_EQ(outputs[0], outputs[2]) << "3 threads differ from 1";
        // By rows, each thread copies the input rows it reads into its kept scratch: no
        // workspace.
        if (k.by_rows) {
          EXPECT_EQ(conv.workspace_floats(batch, 2), 0);
        }
        // Three threads asked with kept scratch for two: a team of two, the same bits; a
        // piece a line short of thread_floats() is an error, not an overrun.
        std::vector<float> y(expected.size(), NAN);
        Scratch scratch(conv, batch, 2);
        conv.run(batch, xin.data(), b.data(), act, y.data(), scratch.workspace, scratch.own, 3, rin.data(), wt.data());
        ASSERT_EQ(layouts.output_blocked ? reorder_nchwc(y, batch, s.cout, out_pixels, c, false) : y, outputs[0]);
        for (int threads : {1, 2}) {
          if (conv.thread_floats(batch, threads) == 0) continue;
          Scratch enough(conv, batch, threads);
          const ThreadScratch short_pieces(reinterpret_cast<std::byte*>(enough.own.floats(0, 0, "test").data()),
                                           threads, 4 * conv.thread_floats(batch, threads) - 64);
          EXPECT_THROW(conv.run(batch, xin.data(), b.data(), {}, y.data(), enough.workspace, short_pieces, threads,
                                rin.data(), wt.data()),
                       std::logic_error);
        }
      }
    }
  }
}

// A NaN or an infinity in a 4x4 Winograd window would reach all four outputs of its tile
// (the transforms add every window value into several products, and an infinity minus
// itself is NaN): those tiles are summed directly, so every output is NaN, infinite or
// finite exactly where the naive loop's is, and the finite ones agree; one group and two,
// with a residual (also in the output's buffer, which the tiles overwrite).
TEST(BlockedConvKernels, WinogradSumsWindowsWithANanOrAnInfinityDirectly) {
  uint32_t seed = 4000;
  for (Isa isa : simd_isas()) {
    const int64_t c = kernels::blocked_conv_kernel(isa)->lanes;
    // 101 columns: bands of fewer tiles than the plane, which on an NCHWc output end
    // within tile rows.
    for (const auto& [group, w] : {std::pair<int64_t, int64_t>{1, 11}, {2, 11}, {1, 101}}) {
      const ConvGeometry s = conv_shape(2 * c, 9, w, 2 * c, group, 3, 1, 1, 1, 1, 1);
      const int64_t batch = 2, in_pixels = s.h * s.w, out_pixels = s.out_h * s.out_w;
      std::vector<float> x = random_values(batch * s.cin * in_pixels, seed);
      const std::vector<float> wt = random_values(s.cout * s.cin_per_group() * 9, seed + 1);
      const std::vector<float> b = random_values(s.cout, seed + 2);
      if (w == 11) {
        x[(0 * s.cin + 3) * in_pixels + 4 * s.w + 6] = NAN;           // image 0, interior
        x[(1 * s.cin + c + 1) * in_pixels + 8 * s.w + 0] = INFINITY;  // image 1, a corner
        x[(1 * s.cin + 0) * in_pixels + 2 * s.w + 9] = -INFINITY;     // image 1, near an edge
        x[(0 * s.cin + 2 * c - 1) * in_pixels + 0 * s.w + 10] = NAN;  // image 0, the last corner
      } else {
        // Image 0's only infinity is in the windows of tile rows 1 and 2, which bands that
        // start in row 0 (whose windows hold none) reach. (A lone NaN reaches just the
        // outputs whose windows hold it through the transforms too; an infinity becomes
        // NaN in sums of it and minus it.)
        x[(0 * s.cin + c / 2) * in_pixels + 3 * s.w + 40] = INFINITY;
        x[(1 * s.cin + 2 * c - 1) * in_pixels + 0 * s.w + 63] = INFINITY;
        x[(1 * s.cin + c + 5) * in_pixels + 4 * s.w + 85] = NAN;
      }
      const std::vector<float> r = random_values(batch * s.cout * out_pixels, seed + 3);
      seed += 4;
      const std::vector<float> plain = naive_conv(s, batch, x, wt, b.data(), {});
      int64_t nonfinite = 0;
      for (float v : plain) nonfinite += !std::isfinite(v);
      ASSERT_GT(nonfinite, 0);
      // With no residual, a residual in its own buffer, and the output's own buffer.
      for (const bool blocked : {false, true})
        for (int residual = 0; residual < 3; ++residual) {
          std::vector<float> expected = plain;
          if (residual)
            for (size_t i = 0; i < expected.size(); ++i) expected[i] += r[i];
          const kernels::BlockedConv conv(s, wt.data(), isa, {blocked, blocked}, kernels::BlockedAlgorithm::kWinograd);
          const std::vector<float> xin = blocked ? reorder_nchwc(x, batch, s.cin, in_pixels, c, true) : x;
          const std::vector<float> rin = blocked ? reorder_nchwc(r, batch, s.cout, out_pixels, c, true) : r;
          for (int threads : {1, 2}) {
            std::vector<float> y = residual == 2 ? rin : std::vector<float>(expected.size(), NAN);
            Scratch scratch(conv, batch, threads);
            conv.run(batch, xin.data(), b.data(), {}, y.data(), scratch.workspace, scratch.own, threads,
                     residual == 1   ? rin.data()
                     : residual == 2 ? y.data()
                                     : nullptr,
                     wt.data());
            if (blocked) y = reorder_nchwc(y, batch, s.cout, out_pixels, c, false);
            SCOPED_TRACE(testing::Message() << "group " << group << " width " << w << " NCHWc " << blocked
                                            << " residual " << residual << " threads " << threads);
            for (size_t i = 0; i < y.size(); ++i) {
              if (std::isfinite(expected[i]))
                ASSERT_NEAR(y[i], expected[i], 1e-4 * (1 + std::fabs(expected[i]))) << "output " << i;
              else if (std::isnan(expected[i]))
                ASSERT_TRUE(std::isnan(y[i])) << "output " << i << ": " << y[i];
              else
                ASSERT_EQ(y[i], expected[i]) << "output " << i;
            }
          }
        }
    }
  }
}

// Winograd applies to 3x3 windows at stride 1 and dilation 1 over whole input blocks
// (and whole output blocks per group, with groups); the default takes it where its
// multiplies are at most 0.6x the direct sums' and its transformed weights stay in L3,
// with groups on planes of at least 7x7 tiles.
TEST(BlockedConvKernels, WinogradWhereItRunsFewerMultiplies) {
  for (Isa isa : simd_isas()) {
    const int64_t c = kernels::blocked_conv_kernel(isa)->lanes;
    const auto algorithm = [isa](const ConvGeometry& s) { return kernels::default_blocked_algorithm(s, isa); };
    using kernels::BlockedAlgorithm;
    EXPECT_EQ(algorithm(conv_shape(4 * c, 56, 56, 4 * c, 1, 3, 1, 1, 1, 1, 1)), BlockedAlgorithm::kWinograd);
    // 7x7: 16 tiles x 16 = 256 multiplies per channel pair against 441.
    EXPECT_EQ(algorithm(conv_shape(4 * c, 7, 7, 4 * c, 1, 3, 1, 1, 1, 1, 1)), BlockedAlgorithm::kWinograd);
    // 5x5: 9 tiles x 16 = 144 against 225 (0.64x).
    EXPECT_EQ(algorithm(conv_shape(4 * c, 5, 5, 4 * c, 1, 3, 1, 1, 1, 1, 1)), BlockedAlgorithm::kDirect);
    // 1024 -> 1024 at 14x14: 64 MiB of transformed weights, read once per band of 7
    // tiles (512 -> 512: 16 MiB, from L3); 2048 -> 512 at 28x28: 64 MiB per 14 tiles.
    EXPECT_EQ(algorithm(conv_shape(1024, 14, 14, 1024, 1, 3, 1, 1, 1, 1, 1)), BlockedAlgorithm::kDirect);
    EXPECT_EQ(algorithm(conv_shape(2048, 28, 28, 512, 1, 3, 1, 1, 1, 1, 1)), BlockedAlgorithm::kWinograd);
    EXPECT_EQ(algorithm(conv_shape(2048, 26, 26, 512, 1, 3, 1, 1, 1, 1, 1)), BlockedAlgorithm::kDirect);
    EXPECT_EQ(algorithm(conv_shape(512, 14, 14, 512, 1, 3, 1, 1, 1, 1, 1)), BlockedAlgorithm::kWinograd);
    EXPECT_FALSE(kernels::winograd_applies(conv_shape(4 * c, 56, 56, 4 * c, 1, 3, 2, 1, 1, 1, 1), isa));
    EXPECT_FALSE(kernels::winograd_applies(conv_shape(4 * c, 56, 56, 4 * c, 1, 3, 1, 2, 2, 2, 2, 2), isa));
    EXPECT_TRUE(kernels::winograd_applies(conv_shape(4 * c, 56, 56, 4 * c, 2, 3, 1, 1, 1, 1, 1), isa));
    // Groups: from 14x14 planes (7x7 tiles) up.
    EXPECT_EQ(algorithm(conv_shape(4 * c, 14, 14, 4 * c, 4, 3, 1, 1, 1, 1, 1)), BlockedAlgorithm::kWinograd);
    EXPECT_EQ(algorithm(conv_shape(4 * c, 7, 7, 4 * c, 4, 3, 1, 1, 1, 1, 1)), BlockedAlgorithm::kDirect);
    EXPECT_FALSE(kernels::winograd_applies(conv_shape(4 * c, 56, 56, 4 * c, 8, 3, 1, 1, 1, 1, 1), isa));
    EXPECT_FALSE(kernels::winograd_applies(conv_shape(4 * c, 56, 56, 4 * c, 1, 5, 1, 2, 2, 2, 2), isa));
    EXPECT_FALSE(kernels::winograd_applies(conv_shape(c + 1, 56, 56, 4 * c, 1, 3, 1, 1, 1, 1, 1), isa));
    // Without the unpacked weights it could not sum a tile with a NaN exactly.
    const ConvGeometry s = conv_shape(c, 6, 6, c, 1, 3, 1, 1, 1, 1, 1);
    const std::vector<float> wt = random_values(c * c * 9, 1), x = random_values(c * 36, 2);
    const kernels::BlockedConv conv(s, wt.data(), isa, {}, BlockedAlgorithm::kWinograd);
    std::vector<float> y(c * 36);
    Scratch scratch(conv, 1, 1);
    EXPECT_THROW(conv.run(1, x.data(), nullptr, {}, y.data(), scratch.workspace, scratch.own, 1),
                 std::invalid_argument);
  }
}

// No barrier parts the input copies from the sums (a thread may write its output rows
// while another copies its input rows): an output over the input is refused.
TEST(BlockedConvKernels, OutputMustNotOverlapTheInput) {
  for (Isa isa : simd_isas()) {
    const int64_t c = kernels::blocked_conv_kernel(isa)->lanes;
    const ConvGeometry s = conv_shape(c, 16, 16, c, 1, 3, 1, 1, 1, 1, 1);
    const std::vector<float> wt = random_values(c * c * 9, 1);
    std::vector<float> x = random_values(c * 16 * 16 + c, 2);
    const kernels::BlockedConv conv(s, wt.data(), isa, {true, true});
    Scratch scratch(conv, 1, 2);
    for (int64_t shift : {int64_t{0}, c})
      EXPECT_THROW(
          conv.run(1, x.data(), nullptr, {}, x.data() + shift, scratch.workspace, scratch.own, 2, nullptr, wt.data()),
          std::invalid_argument);
    std::vector<float> y(c * 16 * 16);
    EXPECT_NO_THROW(
        conv.run(1, x.data(), nullptr, {}, y.data(), scratch.workspace, scratch.own, 2, y.data(), wt.data()));
  }
}

TEST(BlockedConvKernels, NchwcChannelsMustBeWholeBlocks) {
  for (Isa isa : simd_isas()) {
    const int64_t c = kernels::blocked_conv_kernel(isa)->lanes;
    const ConvGeometry s = conv_shape(c + 1, 9, 9, 2 * c, 1, 3, 1, 1, 1, 1, 1);
    EXPECT_TRUE(kernels::blocked_conv_applies(s, isa, {false, true}));
    EXPECT_FALSE(kernels::blocked_conv_applies(s, isa, {true, false}));
    const ConvGeometry t = conv_shape(c, 9, 9, c + 3, 1, 3, 1, 1, 1, 1, 1);
    EXPECT_TRUE(kernels::blocked_conv_applies(t, isa, {true, false}));
    EXPECT_FALSE(kernels::blocked_conv_applies(t, isa, {true, true}));
  }
}

}  // namespace
}  // namespace minfer::test
