// Google Benchmark micro-benchmarks of the SGEMM on squares and on the GEMMs of
// MobileNetV1 and ResNet-18 layers, with OpenBLAS's cblas_sgemm on the same shapes when
// it was found at configure time. Reports GFLOP/s (2*M*N*K per call). Run it with
// interleaved repetitions and compare medians (bench/gemm_ratios.py, docs/performance.md).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ops/kernels/gemm.h"

#ifdef MINFER_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

using minfer::kernels::GemmKernel;
using minfer::kernels::GemmOperand;
using minfer::kernels::GemmPacked;
using minfer::kernels::PackedMatrix;

// A GEMM shape as the engine calls it: C[M,N] = A[M,K] B[K,N]. For a convolution
// (im2col / pointwise) M = Cout, N = Hout*Wout, K = Cin*Kh*Kw and A holds the weights;
// for a fully connected layer at batch 1, M = 1 and B holds the weights (stored
// transposed, [N, K], as ONNX Gemm's transB=1).
struct GemmShape {
  std::string name;
  int64_t m, n, k;
  bool weights_are_b = false;
};

std::vector<GemmShape> shapes() {
  std::vector<GemmShape> s;
  for (int64_t d : {256, 512, 1024, 2048}) s.push_back({fmt::format("square_{}", d), d, d, d});
  // The conv-shaped reference point: 128 output channels at 56x56, K = 64*3*3.
  s.push_back({"conv_128x3136x576", 128, 3136, 576});
  // MobileNetV1 1.0 at 224x224 (models/mobilenet_v1.json): the first conv (im2col) and the
  // 13 pointwise convs; depthwise convs are not GEMMs.
  s.push_back({"mbv1_conv1_3x3s2", 32, 12544, 27});
  s.push_back({"mbv1_pw1", 64, 12544, 32});
  s.push_back({"mbv1_pw2", 128, 3136, 64});
  s.push_back({"mbv1_pw3", 128, 3136, 128});
  s.push_back({"mbv1_pw4", 256, 784, 128});
  s.push_back({"mbv1_pw5", 256, 784, 256});
  s.push_back({"mbv1_pw6", 512, 196, 256});
  s.push_back({"mbv1_pw7-11", 512, 196, 512});
  s.push_back({"mbv1_pw12", 1024, 49, 512});
  s.push_back({"mbv1_pw13", 1024, 49, 1024});
  s.push_back({"mbv1_fc", 1, 1000, 1024, true});
  // ResNet-18 at 224x224 (torchvision): 7x7 stem, 3x3 convs per stage (the strided first
  // conv of a stage separately), the 1x1 strided downsample convs, the classifier.
  s.push_back({"r18_conv1_7x7s2", 64, 12544, 147});
  s.push_back({"r18_layer1_3x3", 64, 3136, 576});
  s.push_back({"r18_layer2_3x3s2", 128, 784, 576});
  s.push_back({"r18_layer2_3x3", 128, 784, 1152});
  s.push_back({"r18_layer2_ds1x1", 128, 784, 64});
  s.push_back({"r18_layer3_3x3s2", 256, 196, 1152});
  s.push_back({"r18_layer3_3x3", 256, 196, 2304});
  s.push_back({"r18_layer3_ds1x1", 256, 196, 128});
  s.push_back({"r18_layer4_3x3s2", 512, 49, 2304});
  s.push_back({"r18_layer4_3x3", 512, 49, 4608});
  s.push_back({"r18_layer4_ds1x1", 512, 49, 256});
  s.push_back({"r18_fc", 1, 1000, 512, true});
  // MobileNetV3-Large's two fully connected layers and EfficientNet-B0's classifier.
  // MobileNetV3-Large's first pointwise convs at 112x112: K = 16, memory-bound.
  s.push_back({"mbv3_pw_16x12544x16", 16, 12544, 16});
  s.push_back({"mbv3_pw_64x12544x16", 64, 12544, 16});
  s.push_back({"mbv3_fc1", 1, 1280, 960, true});
  s.push_back({"mbv3_fc2", 1, 1000, 1280, true});
  s.push_back({"effb0_fc", 1, 1000, 1280, true});
  // The LSTM of models/lstm.json (D 64, H 256, 32 steps, batch 1): the fused plan's
  // input projection of all steps and its per-step recurrent product, the minimal
  // plan's per-gate recurrent product.
  s.push_back({"lstm_input_proj", 32, 1024, 64, true});
  s.push_back({"lstm_step", 1, 1024, 256, true});
  s.push_back({"lstm_gate", 1, 256, 256, true});
  return s;
}

struct Matrices {
  std::vector<float> a, b, c;
  explicit Matrices(const GemmShape& s) : a(s.m * s.k), b(s.k * s.n), c(s.m * s.n) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
  }
  // B as the layer stores it: [N, K] for fully connected weights.
  int64_t ldb(const GemmShape& s) const { return s.weights_are_b ? s.k : s.n; }
};

void set_gflops(benchmark::State& state, const GemmShape& s) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(2e-9 * double(s.m) * double(s.n) * double(s.k), benchmark::Counter::kIsIterationInvariantRate);
}

// Both operands plain (packed on every call): the same work as cblas_sgemm does.
void engine_plain(benchmark::State& state, const GemmShape& s, int threads) {
  Matrices x(s);
  const GemmKernel& kn = minfer::kernels::active_gemm_kernel();
  std::vector<float> ws(minfer::kernels::gemm_workspace_bytes(kn, s.m, s.n, s.k, threads, GemmPacked::kNone) / 4);
  for (auto _ : state) {
    minfer::kernels::gemm(s.m, s.n, s.k, 1.0f, GemmOperand(x.a.data(), s.k),
                          GemmOperand(x.b.data(), x.ldb(s), s.weights_are_b), 0.0f, x.c.data(), s.n, {}, ws, threads,
                          kn);
    benchmark::DoNotOptimize(x.c.data());
    benchmark::ClobberMemory();
  }
  set_gflops(state, s);
  state.SetLabel(kn.name);
}

// The weights packed once, as the ops run it (conv: A; fully connected: B).
void engine_prepacked(benchmark::State& state, const GemmShape& s, int threads) {
  Matrices x(s);
  const GemmKernel& kn = minfer::kernels::active_gemm_kernel();
  const PackedMatrix w = s.weights_are_b ? PackedMatrix::pack_b(kn, x.b.data(), x.ldb(s), true, s.k, s.n)
                                         : PackedMatrix::pack_a(kn, x.a.data(), s.k, false, s.m, s.k);
  const GemmPacked packed = s.weights_are_b ? GemmPacked::kB : GemmPacked::kA;
  std::vector<float> ws(minfer::kernels::gemm_workspace_bytes(kn, s.m, s.n, s.k, threads, packed) / 4);
  const GemmOperand a = s.weights_are_b ? GemmOperand(x.a.data(), s.k) : GemmOperand(w);
  const GemmOperand b = s.weights_are_b ? GemmOperand(w) : GemmOperand(x.b.data(), s.n);
  for (auto _ : state) {
    minfer::kernels::gemm(s.m, s.n, s.k, 1.0f, a, b, 0.0f, x.c.data(), s.n, {}, ws, threads, kn);
    benchmark::DoNotOptimize(x.c.data());
    benchmark::ClobberMemory();
  }
  set_gflops(state, s);
  state.SetLabel(kn.name);
}

// A fully connected layer at batch 1 with its weights packed once, whose calls cycle
// through copies of the weights larger together than the L3 cache, so each call reads
// its weights from memory, as a layer does in a model whose weights do not all fit in
// the cache.
void engine_fc_cold(benchmark::State& state, const GemmShape& s, int threads) {
  Matrices x(s);
  const GemmKernel& kn = minfer::kernels::active_gemm_kernel();
  const int64_t copies = std::max<int64_t>(2, (int64_t{96} << 20) / (4 * s.k * s.n));
  std::vector<PackedMatrix> w;
  for (int64_t i = 0; i < copies; ++i) w.push_back(PackedMatrix::pack_b(kn, x.b.data(), x.ldb(s), true, s.k, s.n));
  std::vector<float> ws(minfer::kernels::gemm_workspace_bytes(kn, s.m, s.n, s.k, threads, GemmPacked::kB) / 4);
  int64_t i = 0;
  for (auto _ : state) {
    minfer::kernels::gemm(s.m, s.n, s.k, 1.0f, GemmOperand(x.a.data(), s.k), GemmOperand(w[i]), 0.0f, x.c.data(), s.n,
                          {}, ws, threads, kn);
    i = (i + 1) % copies;
    benchmark::DoNotOptimize(x.c.data());
    benchmark::ClobberMemory();
  }
  set_gflops(state, s);
  state.SetLabel(kn.name);
}

#ifdef MINFER_HAVE_OPENBLAS
void openblas(benchmark::State& state, const GemmShape& s, int threads) {
  Matrices x(s);
  openblas_set_num_threads(threads);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, s.weights_are_b ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.0f,
                x.a.data(), s.k, x.b.data(), x.ldb(s), 0.0f, x.c.data(), s.n);
    benchmark::DoNotOptimize(x.c.data());
    benchmark::ClobberMemory();
  }
  set_gflops(state, s);
  state.SetLabel(openblas_get_corename());
}
#endif

// Shapes also measured with two threads.
bool two_thread_shape(const std::string& name) {
  return name == "square_1024" || name == "conv_128x3136x576" || name == "r18_layer1_3x3" || name == "mbv1_pw5" ||
         name == "lstm_step" || name.ends_with("_fc") || name.starts_with("mbv3_fc");
}

void register_all() {
  for (const GemmShape& s : shapes()) {
    for (int threads : {1, 2}) {
      if (threads == 2 && !two_thread_shape(s.name)) continue;
      const std::string suffix = fmt::format("{}/{}x{}x{}/threads:{}", s.name, s.m, s.n, s.k, threads);
      std::vector<benchmark::internal::Benchmark*> runs = {
          benchmark::RegisterBenchmark(("engine/" + suffix).c_str(), engine_plain, s, threads),
          benchmark::RegisterBenchmark(("engine_prepacked/" + suffix).c_str(), engine_prepacked, s, threads)};
      if (s.m == 1 && s.weights_are_b)
        runs.push_back(
            benchmark::RegisterBenchmark(("engine_prepacked_cold/" + suffix).c_str(), engine_fc_cold, s, threads));
#ifdef MINFER_HAVE_OPENBLAS
      runs.push_back(benchmark::RegisterBenchmark(("openblas/" + suffix).c_str(), openblas, s, threads));
#endif
      // One thread: rates per second of CPU time, which on a shared machine leaves out the
      // time the benchmark waited for a core. Two threads: wall time (CPU time adds up).
      if (threads > 1)
        for (auto* run : runs) run->UseRealTime();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
