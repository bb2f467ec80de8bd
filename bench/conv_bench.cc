// Convolution micro-benchmarks (Google Benchmark) on real model shapes: the depthwise
// layers of MobileNetV1/V2 (and MobileNetV3's 5x5 ones) at 224, the first layers of
// MobileNetV1 and ResNet-18, and a sweep of input channel counts that decides where the
// direct small-channel kernel stops paying, the GEMM-shaped layers of ResNet-18 and
// MobileNetV1/V2 (3x3 and 1x1) on the packed GEMM, and the 1x1 layers of the mobile
// networks, ResNet-50 and GoogLeNet on the GEMM and the direct pointwise kernel. Each
// shape runs the reference path and every kernel target this CPU runs (plus im2col +
// OpenBLAS sgemm, when built with OpenBLAS, as the stand-in for a good GEMM), in one
// binary. GFLOP/s by the op's cost convention
// (2 x MACs; bias and activation not counted). One-thread rates use CPU time, two-thread
// rates wall time. bench/conv_ratios.py turns the JSON output into the tables of
// docs/performance.md.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graph/aligned_buffer.h"
#include "ops/blocked_layout.h"
#include "ops/kernels/blocked_conv.h"
#include "ops/kernels/conv_gemm.h"
#include "ops/kernels/depthwise_conv.h"
#include "ops/kernels/direct_conv.h"
#include "ops/kernels/pointwise_conv.h"
#include "ops/reference/conv2d.h"
#include "ops/reference/depthwise_conv.h"
#include "ops/reference/im2col.h"

#ifdef MINFER_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace minfer {
namespace {

struct Layer {
  std::string name;
  int64_t cin, size, cout, k, stride, group;
};

ConvGeometry shape_of(const Layer& l) {
  ConvGeometry s;
  s.cin = l.cin, s.h = l.size, s.w = l.size, s.cout = l.cout, s.group = l.group;
  const int64_t pad = l.k / 2;
  s.win = {l.k, l.k, l.stride, l.stride, 1, 1, pad, pad, pad, pad};
  s.out_h = s.out_w = (l.size + 2 * pad - l.k) / l.stride + 1;
  return s;
}

int64_t flops(const ConvGeometry& s) {
  return 2 * s.win.kh * s.win.kw * s.cin_per_group() * s.out_h * s.out_w * s.cout;
}

std::vector<float> random_floats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// One layer's tensors: input, weights, bias, output, a workspace for the method and
// `threads` pieces of `own_floats` kept scratch, on cache lines as in a session's arena
// (a vector's 16-byte alignment split a thread's vector stores across lines).
struct Tensors {
  Tensors(const ConvGeometry& s, int64_t workspace_floats, int threads, int64_t own_floats)
      : x(random_floats(s.cin * s.h * s.w, 1)),
        w(random_floats(s.cout * s.cin_per_group() * s.win.kh * s.win.kw, 2)),
        b(random_floats(s.cout, 3)),
        y(s.cout * s.out_h * s.out_w),
        storage(4 * (whole_lines(workspace_floats) + threads * own_floats)),
        workspace(reinterpret_cast<float*>(storage.data()), static_cast<size_t>(workspace_floats)),
        own(storage.data() + 4 * whole_lines(workspace_floats), threads, 4 * own_floats) {}
  std::vector<float> x, w, b, y;
  AlignedBuffer storage;
  std::span<float> workspace;
  ThreadScratch own;
};

// Registers one benchmark running `method` on the layer, with its GFLOP/s counter.
void add(const std::string& group, const Layer& layer, const std::string& method, int threads, int64_t workspace_floats,
         std::function<void(const ConvGeometry&, Tensors&)> run, int64_t own_floats = 0) {
  const ConvGeometry s = shape_of(layer);
  auto* b = benchmark::RegisterBenchmark(fmt::format("{}/{}/{}/threads:{}", group, layer.name, method, threads).c_str(),
                                         [s, workspace_floats, run, threads, own_floats](benchmark::State& state) {
                                           Tensors t(s, workspace_floats, threads, own_floats);
                                           for (auto _ : state) {
                                             run(s, t);
                                             benchmark::DoNotOptimize(t.y.data());
                                             benchmark::ClobberMemory();
                                           }
                                           state.counters["GFLOP/s"] =
                                               benchmark::Counter(static_cast<double>(flops(s)) * 1e-9,
                                                                  benchmark::Counter::kIsIterationInvariantRate);
                                         });
  b->Unit(benchmark::kMicrosecond);
  if (threads > 1) b->UseRealTime();
}

// The depthwise layer by the reference and by each target's kernels of its window (per
// plane and, on the SIMD targets, channels in lanes: find_depthwise_kernel picks one of
// the two by these figures); `act` (a fused activation) applies to the kernels only.
void add_depthwise(const Layer& l, const std::string& group = "depthwise", const Activation& act = {}) {
  const ConvGeometry s = shape_of(l);
  add(group, l, "reference", 1, 0, [](const ConvGeometry& s, Tensors& t) {
    reference::depthwise_conv2d(s, t.x.data(), t.w.data(), t.b.data(), t.y.data());
  });
  for (Isa isa : runnable_isas())
    for (const kernels::DepthwiseKernel& kernel : kernels::depthwise_kernels(isa)) {
      if (kernel.kernel_size != l.k || kernel.stride != l.stride) continue;
      const kernels::DepthwiseKernel* k = &kernel;
      // NCHW planes, and (channels-in-lanes kernels of the region's lane count, whole
      // blocks) NCHWc in and out as inside a blocked region or NCHWc in only as at its
      // end (_nchwc_in): the same floats read in another order.
      for (const kernels::BlockedLayouts layouts :
           {kernels::BlockedLayouts{}, kernels::BlockedLayouts{true, true}, kernels::BlockedLayouts{true, false}}) {
        if (layouts.any() && (!k->channels_in_lanes || k->lanes != blocked_lanes(isa) || s.cin % k->lanes != 0))
          continue;
        for (int threads : {1, 2}) {
          if (threads == 2 && isa != active_isa()) continue;
          add(
              group, l,
              k->name + std::string(!layouts.any()           ? ""
                                    : layouts.output_blocked ? "_nchwc"
                                                             : "_nchwc_in"),
              threads, 0,
              [k, threads, act, layouts](const ConvGeometry& s, Tensors& t) {
                kernels::depthwise_conv2d(*k, s, 1, t.x.data(), t.w.data(), t.b.data(), t.y.data(), t.own, threads, act,
                                          layouts);
              },
              kernels::depthwise_thread_floats(*k, s));
        }
      }
    }
}

// Conv's GEMM path (ops/kernels/conv_gemm.h): weights packed once, im2col fused into
// the GEMM's B packing (none for a pointwise layer), 1 and 2 threads.
void add_conv_gemm(const std::string& group, const Layer& l) {
  const ConvGeometry s = shape_of(l);
  // Tensors' weights are random_floats(..., 2): the same values, packed here once.
  auto conv = std::make_shared<const kernels::ConvGemm>(
      s, random_floats(s.cout * s.cin_per_group() * s.win.kh * s.win.kw, 2).data(), active_isa());
  for (int threads : {1, 2})
    add(group, l, "conv_gemm", threads, kernels::conv_gemm_workspace_floats(s, conv->kernel(), true, threads),
        [conv, threads](const ConvGeometry&, Tensors& t) {
          conv->run(1, t.x.data(), nullptr, t.b.data(), {}, t.y.data(), t.workspace, threads);
        });
}

// The blocked NCHWc direct convolution (ops/kernels/blocked_conv.h) of every target this
// CPU runs that applies to the layer; two threads for the active target.
void add_blocked(const std::string& group, const Layer& l) {
  const ConvGeometry s = shape_of(l);
  for (Isa isa : runnable_isas())
    // NCHW in and out (reordered inside), and NCHWc in and out as inside a region of
    // blocked ops (the input's values are the same floats, only read in another order).
    // Each by the direct sums and, where it applies, by Winograd F(2x2, 3x3).
    for (const kernels::BlockedLayouts layouts : {kernels::BlockedLayouts{}, kernels::BlockedLayouts{true, true}})
      for (const kernels::BlockedAlgorithm algorithm :
           {kernels::BlockedAlgorithm::kDirect, kernels::BlockedAlgorithm::kWinograd}) {
        const bool winograd = algorithm == kernels::BlockedAlgorithm::kWinograd;
        if (!kernels::blocked_conv_applies(s, isa, layouts) || (winograd && !kernels::winograd_applies(s, isa)))
          continue;
        auto conv = std::make_shared<const kernels::BlockedConv>(
            s, random_floats(s.cout * s.cin_per_group() * s.win.kh * s.win.kw, 2).data(), isa, layouts, algorithm);
        const std::string name = conv->kernel().name + std::string(winograd ? "_winograd" : "") +
                                 std::string(layouts.input_blocked ? "_nchwc" : "");
        for (int threads : {1, 2}) {
          if (threads == 2 && isa != active_isa()) continue;
          add(
              group, l, name, threads, conv->workspace_floats(1, threads),
              [conv, threads](const ConvGeometry&, Tensors& t) {
                conv->run(1, t.x.data(), t.b.data(), {}, t.y.data(), t.workspace, t.own, threads, nullptr, t.w.data());
              },
              conv->thread_floats(1, threads));
        }
      }
}

// The direct pointwise kernel (ops/kernels/pointwise_conv.h) of every target this CPU
// runs that takes the layer; two threads for the active target.
void add_pointwise(const std::string& group, const Layer& l) {
  const ConvGeometry s = shape_of(l);
  for (Isa isa : runnable_isas()) {
    const kernels::PointwiseKernel* k = kernels::find_pointwise_kernel(s, isa);
    if (!k) continue;
    auto conv = std::make_shared<const kernels::PointwiseConv>(*k, s, random_floats(s.cout * s.cin, 2).data());
    for (int threads : {1, 2}) {
      if (threads == 2 && isa != active_isa()) continue;
      add(group, l, k->name, threads, conv->workspace_floats(), [conv, threads](const ConvGeometry&, Tensors& t) {
        conv->run(1, t.x.data(), t.b.data(), {}, t.y.data(), t.workspace, threads);
      });
    }
  }
}

// Regular convolutions: the reference im2col + scalar GEMM (a plain GEMM over the input
// for a pointwise layer), im2col + OpenBLAS, Conv's GEMM path and, unless `gemm_only`, the
// direct kernel of every target (whatever the channel count: the sweep compares them).
void add_regular(const std::string& group, const Layer& l, bool reference_path, bool gemm_only = false) {
  const ConvGeometry s = shape_of(l);
  if (reference_path)
    add(group, l, "reference_im2col", 1, s.col_floats(), [](const ConvGeometry& s, Tensors& t) {
      if (kernels::is_pointwise(s))
        reference::conv2d_pointwise(s, t.x.data(), t.w.data(), t.b.data(), t.y.data());
      else
        reference::conv2d_im2col(s, t.x.data(), t.w.data(), t.b.data(), t.y.data(), t.workspace.data());
    });
#ifdef MINFER_HAVE_OPENBLAS
  if (s.group == 1)
    add(group, l, "im2col_openblas", 1, s.col_floats(), [](const ConvGeometry& s, Tensors& t) {
      const int64_t n = s.out_h * s.out_w, k = s.cin * s.win.kh * s.win.kw;
      reference::im2col(t.x.data(), s.cin, s.h, s.w, s.win, s.out_h, s.out_w, t.workspace.data());
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.cout, n, k, 1.0f, t.w.data(), k, t.workspace.data(), n,
                  0.0f, t.y.data(), n);
      reference::add_bias(t.y.data(), s.cout, n, t.b.data());
    });
#endif
  add_conv_gemm(group, l);
  add_pointwise(group, l);
  add_blocked(group, l);
  if (gemm_only) return;
  for (Isa isa : runnable_isas())
    for (const kernels::DirectConvKernel* k : kernels::direct_conv_kernels(isa))
      for (int threads : {1, 2}) {
        if (threads == 2 && isa != active_isa()) continue;
        add(
            group, l, k->name, threads, 0,
            [k, threads](const ConvGeometry& s, Tensors& t) {
              kernels::direct_conv2d(*k, s, 1, t.x.data(), t.w.data(), t.b.data(), t.y.data(), t.own, threads);
            },
            kernels::direct_conv_thread_floats(*k, s));
      }
}

void register_all() {
  const std::vector<Layer> depthwise = {
      {"v1_dw1_32x112_s1", 32, 112, 32, 3, 1, 32},      {"v1_dw2_64x112_s2", 64, 112, 64, 3, 2, 64},
      {"v1_dw3_128x56_s1", 128, 56, 128, 3, 1, 128},    {"v1_dw4_128x56_s2", 128, 56, 128, 3, 2, 128},
      {"v1_dw5_256x28_s1", 256, 28, 256, 3, 1, 256},    {"v1_dw6_256x28_s2", 256, 28, 256, 3, 2, 256},
      {"v1_dw7_512x14_s1", 512, 14, 512, 3, 1, 512},    {"v1_dw12_512x14_s2", 512, 14, 512, 3, 2, 512},
      {"v1_dw13_1024x7_s1", 1024, 7, 1024, 3, 1, 1024}, {"v2_96x112_s2", 96, 112, 96, 3, 2, 96},
      {"v2_144x56_s1", 144, 56, 144, 3, 1, 144},        {"v2_144x56_s2", 144, 56, 144, 3, 2, 144},
      {"v2_192x28_s1", 192, 28, 192, 3, 1, 192},        {"v2_384x14_s1", 384, 14, 384, 3, 1, 384},
      {"v2_576x14_s2", 576, 14, 576, 3, 2, 576},        {"v2_960x7_s1", 960, 7, 960, 3, 1, 960},
      {"v3_5x5_72x56_s2", 72, 56, 72, 5, 2, 72},        {"v3_5x5_120x28_s1", 120, 28, 120, 5, 1, 120},
      {"v3_5x5_672x14_s2", 672, 14, 672, 5, 2, 672},    {"v3_5x5_960x7_s1", 960, 7, 960, 5, 1, 960},
      {"convnext_7x7_96x56_s1", 96, 56, 96, 7, 1, 96},  {"convnext_7x7_384x14_s1", 384, 14, 384, 7, 1, 384},
  };
  for (const Layer& l : depthwise) add_depthwise(l);
  // EfficientNet-B0's depthwise layers, each with its fused SiLU (Swish, alpha 1).
  const std::vector<Layer> efficientnet = {
      {"b0_32x112_s1", 32, 112, 32, 3, 1, 32},       {"b0_96x112_s2", 96, 112, 96, 3, 2, 96},
      {"b0_144x56_s1", 144, 56, 144, 3, 1, 144},     {"b0_5x5_144x56_s2", 144, 56, 144, 5, 2, 144},
      {"b0_5x5_240x28_s1", 240, 28, 240, 5, 1, 240}, {"b0_240x28_s2", 240, 28, 240, 3, 2, 240},
      {"b0_480x14_s1", 480, 14, 480, 3, 1, 480},     {"b0_5x5_672x14_s1", 672, 14, 672, 5, 1, 672},
      {"b0_5x5_672x14_s2", 672, 14, 672, 5, 2, 672}, {"b0_5x5_1152x7_s1", 1152, 7, 1152, 5, 1, 1152},
      {"b0_1152x7_s1", 1152, 7, 1152, 3, 1, 1152},
  };
  for (const Layer& l : efficientnet) add_depthwise(l, "depthwise_silu", {ActivationKind::kSwish, 1.0f});
  add_regular("first_layer", {"v1_conv1_3x224_3x3s2", 3, 224, 32, 3, 2, 1}, true);
  add_regular("first_layer", {"resnet18_conv1_3x224_7x7s2", 3, 224, 64, 7, 2, 1}, true);
  // Where the direct kernel stops paying: input channels 1..16 on a 3x3 layer of a first
  // stage (56x56 -> 32 channels) and of a stem (112x112 stride 2).
  for (int64_t cin : {1, 2, 3, 4, 6, 8, 16}) {
    add_regular("small_cin", {fmt::format("cin{}_56_3x3s1", cin), cin, 56, 32, 3, 1, 1}, false);
    add_regular("small_cin", {fmt::format("cin{}_112_3x3s2", cin), cin, 112, 32, 3, 2, 1}, false);
  }
  const std::vector<Layer> gemm_layers = {
      {"resnet18_3x3_64x56", 64, 56, 64, 3, 1, 1},    {"resnet18_3x3_128x28", 128, 28, 128, 3, 1, 1},
      {"resnet18_3x3_256x14", 256, 14, 256, 3, 1, 1}, {"resnet18_3x3_512x7", 512, 7, 512, 3, 1, 1},
      {"seed_3x3_64x112_128", 64, 112, 128, 3, 1, 1}, {"vgg_3x3_512x14", 512, 14, 512, 3, 1, 1},
      {"big_3x3_1024x14", 1024, 14, 1024, 3, 1, 1},   {"resnet18_3x3s2_64x56", 64, 56, 128, 3, 2, 1},
      {"v1_pw2_64x112_128", 64, 112, 128, 1, 1, 1},   {"v1_pw7_512x14_512", 512, 14, 512, 1, 1, 1},
      {"v2_expand_24x56_144", 24, 56, 144, 1, 1, 1},  {"v2_project_144x56_24", 144, 56, 24, 1, 1, 1},
      {"v2_last_320x7_1280", 320, 7, 1280, 1, 1, 1},
  };
  for (const Layer& l : gemm_layers) add_regular("gemm_conv", l, true, true);
  // Pointwise layers of the mobile networks, ResNet-50 and GoogLeNet, where the direct
  // pointwise kernel replaces the GEMM (and the 7x7 ones, where it stops paying).
  const std::vector<Layer> pointwise = {
      {"v3_16x112_16", 16, 112, 16, 1, 1, 1},
      {"v3_16x112_64", 16, 112, 64, 1, 1, 1},
      {"v1_pw1_32x112_64", 32, 112, 64, 1, 1, 1},
      {"v2_16x112_96", 16, 112, 96, 1, 1, 1},
      {"v2_32x28_192", 32, 28, 192, 1, 1, 1},
      {"v2_192x28_32", 192, 28, 32, 1, 1, 1},
      {"v1_pw4_128x28_256", 128, 28, 256, 1, 1, 1},
      {"b0_40x28_240", 40, 28, 240, 1, 1, 1},
      {"v3_112x14_672", 112, 14, 672, 1, 1, 1},
      {"v2_96x14_576", 96, 14, 576, 1, 1, 1},
      {"b0_192x7_1152", 192, 7, 1152, 1, 1, 1},
      {"v2_160x7_960", 160, 7, 960, 1, 1, 1},
      {"v2_576x7_160", 576, 7, 160, 1, 1, 1},
      {"r50_256x56_64", 256, 56, 64, 1, 1, 1},
      {"r50_64x56_256", 64, 56, 256, 1, 1, 1},
      {"r50_512x28_128", 512, 28, 128, 1, 1, 1},
      {"r50_1024x14_256", 1024, 14, 256, 1, 1, 1},
      {"r50_256x14_1024", 256, 14, 1024, 1, 1, 1},
      {"g_832x14_256", 832, 14, 256, 1, 1, 1},
      {"r18_down_64x56_128_s2", 64, 56, 128, 1, 2, 1},
      {"r18_down_256x14_512_s2", 256, 14, 512, 1, 2, 1},
      {"regnet_proj_32x112_32_s2", 32, 112, 32, 1, 2, 1},
      {"regnet_proj_32x56_64_s2", 32, 56, 64, 1, 2, 1},
      {"sq_64x55_16", 64, 55, 16, 1, 1, 1},
      {"sq_16x55_64", 16, 55, 64, 1, 1, 1},
      {"sq_384x13_48", 384, 13, 48, 1, 1, 1},
      {"sq_48x13_192", 48, 13, 192, 1, 1, 1},
      {"sq_512x13_64", 512, 13, 64, 1, 1, 1},
      {"sq_64x13_256", 64, 13, 256, 1, 1, 1},
      {"sq_512x13_1000", 512, 13, 1000, 1, 1, 1},
      // Planes around the direct kernel's pixel threshold (64, 100, 144 pixels).
      {"edge_256x8_256", 256, 8, 256, 1, 1, 1},
      {"edge_256x10_256", 256, 10, 256, 1, 1, 1},
      {"edge_256x12_256", 256, 12, 256, 1, 1, 1},
  };
  for (const Layer& l : pointwise) add_regular("pointwise", l, false, true);
  // ResNet-50's stride-2 3x3 layers (its stride-1 ones have ResNet-18's shapes),
  // RegNetX-400MF's grouped 3x3 layers (16 channels per group) and RegNetY-400MF's of 8
  // channels per group in counts no merge divides (blocks of their own on AVX-512).
  const std::vector<Layer> more = {
      {"resnet50_3x3s2_128x56", 128, 56, 128, 3, 2, 1}, {"resnet50_3x3s2_256x28", 256, 28, 256, 3, 2, 1},
      {"resnet50_3x3s2_512x14", 512, 14, 512, 3, 2, 1}, {"regnet_g2_32x56", 32, 56, 32, 3, 1, 2},
      {"regnet_g4_64x28", 64, 28, 64, 3, 1, 4},         {"regnet_g10_160x14", 160, 14, 160, 3, 1, 10},
      {"regnet_g25_400x7", 400, 7, 400, 3, 1, 25},      {"sq_3x3_16x55_64", 16, 55, 64, 3, 1, 1},
      {"sq_3x3_32x27_128", 32, 27, 128, 3, 1, 1},       {"regnet_g4_64x56_s2", 64, 56, 64, 3, 2, 4},
      {"regnety_g13_104x28", 104, 28, 104, 3, 1, 13},   {"regnety_g55_440x7", 440, 7, 440, 3, 1, 55},
  };
  for (const Layer& l : more) add_regular("gemm_conv", l, false, true);
}

}  // namespace
}  // namespace minfer

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
#ifdef MINFER_HAVE_OPENBLAS
  openblas_set_num_threads(1);
#endif
  minfer::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
