// How long compile() takes on long chains (Google Benchmark): validation, shape
// inference, the graph passes, op preparation and the memory plan must all be
// near-linear in the number of nodes, so a 100,000-node chain compiles in under
// 2 s. Cases, each at 10,000 and 100,000 nodes:
//   - Relu after Relu (every one runs in place; nothing to fuse);
//   - Conv (1x1) then Relu, alternating (each Relu fused into its Conv);
//   - Identity chains listed in reverse order, plus as long a dead branch (the clean-up
//     passes remove every node but one).
// Run: build/bench/compile_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "engine/compiled_model.h"

namespace minfer {
namespace {

Graph chain_start() {
  Graph g;
  g.name = "chain";
  g.source = "<compile_bench>";
  g.inputs.push_back({"x", {1, 4, 2, 2}});
  g.outputs = {"y"};
  return g;
}

// The tensor node i writes: t<i>, the last one the graph output y.
std::string tensor(int64_t i, int64_t nodes) {
  return i < 0 ? "x" : i == nodes - 1 ? "y" : "t" + std::to_string(i);
}

Graph relu_chain(int64_t nodes) {
  Graph g = chain_start();
  for (int64_t i = 0; i < nodes; ++i)
    g.nodes.push_back({"relu" + std::to_string(i), "Relu", {tensor(i - 1, nodes)}, {tensor(i, nodes)}, {}});
  return g;
}

Graph conv_relu_chain(int64_t nodes) {
  Graph g = chain_start();
  g.initializers["w"] = {{4, 4, 1, 1}, std::vector<float>(16, 0.25f)};
  for (int64_t i = 0; i < nodes; ++i) {
    const std::string name = std::to_string(i);
    if (i % 2 == 0)
      g.nodes.push_back({"conv" + name, "Conv", {tensor(i - 1, nodes), "w"}, {tensor(i, nodes)}, {}});
    else
      g.nodes.push_back({"relu" + name, "Relu", {tensor(i - 1, nodes)}, {tensor(i, nodes)}, {}});
  }
  return g;
}

Graph identities_and_dead_nodes(int64_t nodes) {
  Graph g = chain_start();
  const int64_t half = nodes / 2;
  for (int64_t i = half - 2; i >= 0; --i)
    g.nodes.push_back({"id" + std::to_string(i), "Identity", {tensor(i - 1, half)}, {tensor(i, half)}, {}});
  g.nodes.push_back({"relu", "Relu", {tensor(half - 2, half)}, {"y"}, {}});
  for (int64_t i = 0; i < half; ++i)
    g.nodes.push_back({"dead" + std::to_string(i),
                       "Tanh",
                       {i == 0 ? "x" : "d" + std::to_string(i - 1)},
                       {"d" + std::to_string(i)},
                       {}});
  return g;
}

void register_chain(const char* name, Graph (*make)(int64_t)) {
  benchmark::RegisterBenchmark(name,
                               [make](benchmark::State& state) {
                                 const Graph graph = make(state.range(0));
                                 for (auto _ : state) {
                                   state.PauseTiming();
                                   Graph copy = graph;
                                   state.ResumeTiming();
                                   benchmark::DoNotOptimize(compile(std::move(copy)));
                                 }
                                 state.counters["nodes"] = static_cast<double>(graph.nodes.size());
                               })
      ->Arg(10'000)
      ->Arg(100'000)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}

}  // namespace
}  // namespace minfer

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  minfer::register_chain("compile/relu_chain", &minfer::relu_chain);
  minfer::register_chain("compile/conv_relu_chain", &minfer::conv_relu_chain);
  minfer::register_chain("compile/identities_and_dead_nodes", &minfer::identities_and_dead_nodes);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
