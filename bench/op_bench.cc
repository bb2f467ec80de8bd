// Op- and model-level micro-benchmarks (Google Benchmark) through the engine itself:
// compile() picks the kernel exactly as for a model, so these time what engine_bench
// times, one op at a time, without the report around it.
//   - each Conv kind (regular, depthwise, pointwise, grouped) on MobileNet/ResNet shapes;
//   - ConvTranspose by both methods (col2im, conv) on a decoder's stride-2 upsampling;
//   - the LSTM of models/lstm.json (D=64, H=256, 32 steps) with both cell plans;
//   - the element-wise activations (Sigmoid, Swish, HardSwish) and the squeeze-excitation
//     gate (x[1,C,H,W] * s[1,C,1,1]) on EfficientNet/MobileNetV3 shapes, one thread;
//   - Softmax over a transformer's attention weights, and Exp;
//   - MaxPool 3x3 with strides 2 and 1 (ResNet's stem, GoogLeNet's inception branches),
//     AveragePool 3x3/1 and 2x2/2 (Inception-v3's branches, DenseNet's transitions), in
//     NCHW and in NCHWc;
//   - the cost of the profiler: MobileNetV2 run with per-step timing on and off.
// GFLOP/s by the op's own cost (Cost::flops). One-thread rates use CPU time, two-thread
// rates wall time. Run: build/bench/op_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bench/cli_common.h"
#include "engine/compiled_model.h"
#include "engine/session.h"
#include "graph/model_loader.h"
#include "ops/blocked_layout.h"

namespace minfer {
namespace {

struct Weight {
  std::string name;
  Shape shape;
};

// A graph of one node reading graph input "x" and random-initialised weights.
Graph one_op(const std::string& op_type, const Shape& x, const std::vector<Weight>& weights, Attributes attrs) {
  Graph g;
  g.name = op_type;
  g.source = "<op_bench>";
  g.inputs.push_back({"x", x});
  Node node{"op", op_type, {"x"}, {"y"}, std::move(attrs)};
  uint32_t seed = 1;
  for (const Weight& w : weights) {
    std::vector<float> values(static_cast<size_t>(num_elements(w.shape)));
    // Small deterministic values keep LSTM gates out of saturation.
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.01f * static_cast<float>((i * 7 + seed) % 17) - 0.08f;
    g.initializers[w.name] = Tensor(w.shape, std::move(values));
    node.inputs.push_back(w.name);
    ++seed;
  }
  g.outputs.push_back("y");
  g.nodes.push_back(std::move(node));
  return g;
}

Attributes conv_attrs(int64_t k, int64_t stride, int64_t pad, int64_t group) {
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{k, k});
  a.set("strides", std::vector<int64_t>{stride, stride});
  a.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  a.set("group", group);
  return a;
}

// Registers `graph` run by a Session (profiling off) with `threads` threads.
void add(const std::string& name, const Graph& graph, int threads) {
  CompileOptions options;
  options.num_threads = threads;
  std::shared_ptr<const CompiledModel> model = compile(graph, options);
  auto* b = benchmark::RegisterBenchmark(
      fmt::format("{}/{}/threads:{}", name, model->steps()[0].kind(), threads).c_str(),
      [model](benchmark::State& state) {
        Session session(model);
        session.set_profiling(false);
        cli::fill_inputs_deterministic(session);
        for (auto _ : state) session.run();
        state.counters["GFLOP/s"] = benchmark::Counter(static_cast<double>(model->total_cost().flops) * 1e-9,
                                                       benchmark::Counter::kIsIterationInvariantRate);
      });
  b->Unit(benchmark::kMicrosecond);
  if (threads > 1) b->UseRealTime();
}

void register_ops() {
  // EfficientNet-B0's first SiLU (32x112x112) and a MobileNetV3 HardSwish and its gate.
  add("sigmoid_112x112x32", one_op("Sigmoid", {1, 32, 112, 112}, {}, {}), 1);
  add("swish_112x112x32", one_op("Swish", {1, 32, 112, 112}, {}, {}), 1);
  add("hardswish_56x56x72", one_op("HardSwish", {1, 72, 56, 56}, {}, {}), 1);
  add("mul_gate_56x56x72", one_op("Mul", {1, 72, 56, 56}, {{"s", {1, 72, 1, 1}}}, {}), 1);
  // A transformer's attention weights (8 heads, 128 tokens) and Exp over as many elements.
  add("softmax_8x128x128", one_op("Softmax", {1, 8, 128, 128}, {}, {}), 1);
  add("exp_8x128x128", one_op("Exp", {1, 8, 128, 128}, {}, {}), 1);
  // ResNet's 3x3/2 max pool after the stem, GoogLeNet's 3x3/1 inside an inception (28x28,
  // 14x14 and 7x7 planes) and its 3x3/2 ceil_mode pools between the stages.
  Attributes pool_s2 = conv_attrs(3, 2, 1, 1), pool_s1 = conv_attrs(3, 1, 1, 1), pool_s2_ceil = conv_attrs(3, 2, 0, 1);
  pool_s2.erase("group");
  pool_s1.erase("group");
  pool_s2_ceil.erase("group");
  pool_s2_ceil.set("ceil_mode", int64_t{1});
  add("maxpool_112x112x64_k3s2", one_op("MaxPool", {1, 64, 112, 112}, {}, pool_s2), 1);
  add("maxpool_28x28x192_k3s1", one_op("MaxPool", {1, 192, 28, 28}, {}, pool_s1), 1);
  add("maxpool_14x14x480_k3s1", one_op("MaxPool", {1, 480, 14, 14}, {}, pool_s1), 1);
  add("maxpool_7x7x832_k3s1", one_op("MaxPool", {1, 832, 7, 7}, {}, pool_s1), 1);
  add("maxpool_56x56x192_k3s2_ceil", one_op("MaxPool", {1, 192, 56, 56}, {}, pool_s2_ceil), 1);
  add("maxpool_14x14x832_k3s2_ceil", one_op("MaxPool", {1, 832, 14, 14}, {}, pool_s2_ceil), 1);
  // GoogLeNet's maxpool3 (3x3/2 ceil_mode, 28x28 to 14x14) and maxpool4 (2x2/2 ceil_mode),
  // SqueezeNet's last (27x27 to 13x13).
  Attributes pool_2x2_ceil = conv_attrs(2, 2, 0, 1);
  pool_2x2_ceil.erase("group");
  pool_2x2_ceil.set("ceil_mode", int64_t{1});
  add("maxpool_28x28x480_k3s2_ceil", one_op("MaxPool", {1, 480, 28, 28}, {}, pool_s2_ceil), 1);
  add("maxpool_14x14x832_k2s2_ceil", one_op("MaxPool", {1, 832, 14, 14}, {}, pool_2x2_ceil), 1);
  add("maxpool_27x27x256_k3s2_ceil", one_op("MaxPool", {1, 256, 27, 27}, {}, pool_s2_ceil), 1);
  // Inception-v3's 3x3/1 average pools (count_include_pad), DenseNet's 2x2/2 transitions.
  Attributes average_s1 = pool_s1, transition = conv_attrs(2, 2, 0, 1);
  average_s1.set("count_include_pad", int64_t{1});
  transition.erase("group");
  add("avgpool_35x35x192_k3s1", one_op("AveragePool", {1, 192, 35, 35}, {}, average_s1), 1);
  add("avgpool_17x17x768_k3s1", one_op("AveragePool", {1, 768, 17, 17}, {}, average_s1), 1);
  add("avgpool_56x56x256_k2s2", one_op("AveragePool", {1, 256, 56, 56}, {}, transition), 1);
  // The same pools in NCHWc, as inside a region of the blocked_layout pass.
  if (const int64_t c = blocked_lanes(active_isa())) {
    const auto blocked = [c](Attributes a) {
      a.set(kBlockedInputAttr, c);
      a.set(kBlockedOutputAttr, c);
      return a;
    };
    const auto nchwc = [c](int64_t channels, int64_t size) { return Shape{1, channels / c, size, size, c}; };
    add("maxpool_112x112x64_k3s2_nchwc", one_op("MaxPool", nchwc(64, 112), {}, blocked(pool_s2)), 1);
    add("maxpool_28x28x192_k3s1_nchwc", one_op("MaxPool", nchwc(192, 28), {}, blocked(pool_s1)), 1);
    add("maxpool_14x14x480_k3s1_nchwc", one_op("MaxPool", nchwc(480, 14), {}, blocked(pool_s1)), 1);
    add("maxpool_7x7x832_k3s1_nchwc", one_op("MaxPool", nchwc(832, 7), {}, blocked(pool_s1)), 1);
    add("maxpool_56x56x192_k3s2_ceil_nchwc", one_op("MaxPool", nchwc(192, 56), {}, blocked(pool_s2_ceil)), 1);
    add("maxpool_28x28x480_k3s2_ceil_nchwc", one_op("MaxPool", nchwc(480, 28), {}, blocked(pool_s2_ceil)), 1);
    add("maxpool_27x27x256_k3s2_ceil_nchwc", one_op("MaxPool", nchwc(256, 27), {}, blocked(pool_s2_ceil)), 1);
    add("avgpool_35x35x192_k3s1_nchwc", one_op("AveragePool", nchwc(192, 35), {}, blocked(average_s1)), 1);
    add("avgpool_17x17x768_k3s1_nchwc", one_op("AveragePool", nchwc(768, 17), {}, blocked(average_s1)), 1);
    add("avgpool_56x56x256_k2s2_nchwc", one_op("AveragePool", nchwc(256, 56), {}, blocked(transition)), 1);
  }
  const Shape bias64{64};
  for (int threads : {1, 2}) {
    // ResNet-18 layer1 3x3; the seed's depthwise and pointwise examples; a grouped 3x3.
    add("conv_56x56_64to64_k3",
        one_op("Conv", {1, 64, 56, 56}, {{"w", {64, 64, 3, 3}}, {"b", bias64}}, conv_attrs(3, 1, 1, 1)), threads);
    add("conv_112x112x64_dw_k3",
        one_op("Conv", {1, 64, 112, 112}, {{"w", {64, 1, 3, 3}}, {"b", bias64}}, conv_attrs(3, 1, 1, 64)), threads);
    add("conv_112x112_64to128_k1",
        one_op("Conv", {1, 64, 112, 112}, {{"w", {128, 64, 1, 1}}, {"b", {128}}}, conv_attrs(1, 1, 0, 1)), threads);
    add("conv_56x56_64to64_k3_g4",
        one_op("Conv", {1, 64, 56, 56}, {{"w", {64, 16, 3, 3}}, {"b", bias64}}, conv_attrs(3, 1, 1, 4)), threads);
    // The decoder's middle upsampling: 4x4 kernel, stride 2, 28x28x64 -> 56x56x32.
    for (const char* method : {"col2im", "conv"}) {
      Attributes a = conv_attrs(4, 2, 1, 1);
      a.set("method", std::string(method));
      add("deconv_28x28_64to32_k4s2", one_op("ConvTranspose", {1, 64, 28, 28}, {{"w", {64, 32, 4, 4}}, {"b", {32}}}, a),
          threads);
    }
    // models/lstm.json's cell: D=64, H=256, 32 steps, batch 1.
    for (const char* plan : {"minimal", "fused"}) {
      Attributes a;
      a.set("hidden_size", int64_t{256});
      a.set("plan", std::string(plan));
      add("lstm_T32_D64_H256",
          one_op("LSTM", {32, 1, 64}, {{"W", {1, 1024, 64}}, {"R", {1, 1024, 256}}, {"B", {1, 2048}}}, a), threads);
    }
  }
}

// The profiler's cost: each iteration runs the model once with per-step timing and once
// without, alternating which goes first, so machine noise falls on both alike. Reports
// both medians' worth of totals and the overhead in percent.
void register_profiling(const std::string& model_path) {
  std::shared_ptr<const CompiledModel> model = compile(load_model(model_path), CompileOptions{});
  benchmark::RegisterBenchmark("profiling_overhead/mobilenet_v2_1_0",
                               [model](benchmark::State& state) {
                                 Session session(model);
                                 cli::fill_inputs_deterministic(session);
                                 using Clock = std::chrono::steady_clock;
                                 double on_s = 0, off_s = 0;
                                 int64_t n = 0;
                                 for (auto _ : state) {
                                   for (int pass = 0; pass < 2; ++pass) {
                                     const bool profiling = (pass == 0) == (n % 2 == 0);
                                     session.set_profiling(profiling);
                                     const Clock::time_point t0 = Clock::now();
                                     session.run();
                                     const double s = std::chrono::duration<double>(Clock::now() - t0).count();
                                     (profiling ? on_s : off_s) += s;
                                   }
                                   session.clear_profile();
                                   ++n;
                                 }
                                 state.counters["on_ms"] = 1e3 * on_s / static_cast<double>(n);
                                 state.counters["off_ms"] = 1e3 * off_s / static_cast<double>(n);
                                 state.counters["overhead_%"] = 100.0 * (on_s - off_s) / off_s;
                               })
      ->Unit(benchmark::kMillisecond)
      ->MinTime(5.0);
}

}  // namespace
}  // namespace minfer

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  minfer::register_ops();
  minfer::register_profiling(std::string(MINFER_SOURCE_DIR) + "/models/mobilenet_v2_1_0.json");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
