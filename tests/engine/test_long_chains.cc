// Graphs of 10,000 nodes compile (the passes and the planner are near-linear; the time
// is measured by bench/compile_bench.cc, not here) and compute what a loop here does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/engine.h"
#include "tests/op_test_util.h"

namespace minfer {
namespace {

constexpr int kNodes = 10'000;

std::vector<float> run(const std::shared_ptr<const CompiledModel>& model, const std::vector<float>& x) {
  Session s(model);
  s.set_input("x", x);
  s.run();
  auto y = s.output("y");
  return {y.begin(), y.end()};
}

std::vector<float> relu(std::vector<float> v) {
  for (float& e : v) e = std::max(e, 0.0f);
  return v;
}

Graph chain_start() {
  Graph g;
  g.source = "<chain>";
  g.inputs.push_back({"x", {1, 4, 2, 2}});
  g.outputs = {"y"};
  return g;
}

std::string tensor(int i) {
  return i < 0 ? "x" : i == kNodes - 1 ? "y" : "t" + std::to_string(i);
}

TEST(LongChains, TenThousandRelus) {
  Graph g = chain_start();
  for (int i = 0; i < kNodes; ++i)
    g.nodes.push_back({"r" + std::to_string(i), "Relu", {tensor(i - 1)}, {tensor(i)}, {}});
  auto model = compile(g);
  ASSERT_EQ(model->steps().size(), static_cast<size_t>(kNodes));
  EXPECT_EQ(model->arena_bytes(), 2 * 64);  // the input, and one buffer every Relu runs in place in
  const std::vector<float> x = test::random_values(16, 1);
  EXPECT_EQ(run(model, x), relu(x));
}

// Conv (1x1, weights 2 on the diagonal) -> BatchNormalization -> Relu, over and over:
// folded and fused into one step per triple.
TEST(LongChains, ConvBatchNormReluFoldAndFuse) {
  Graph g = chain_start();
  const int triples = kNodes / 3;
  std::vector<float> w(16, 0.0f);
  for (int c = 0; c < 4; ++c) w[c * 4 + c] = 2.0f;
  g.initializers["w"] = {{4, 4, 1, 1}, w};
  g.initializers["gamma"] = {{4}, std::vector<float>(4, 0.5f)};
  g.initializers["beta"] = {{4}, std::vector<float>(4, 0.0f)};
  g.initializers["mean"] = {{4}, std::vector<float>(4, 0.0f)};
  g.initializers["var"] = {{4}, std::vector<float>(4, 1.0f)};
  std::string in = "x";
  for (int i = 0; i < triples; ++i) {
    const std::string n = std::to_string(i), out = i == triples - 1 ? "y" : "r" + n;
    g.nodes.push_back({"conv" + n, "Conv", {in, "w"}, {"c" + n}, {}});
    g.nodes.push_back({"bn" + n, "BatchNormalization", {"c" + n, "gamma", "beta", "mean", "var"}, {"b" + n}, {}});
    g.nodes.push_back({"relu" + n, "Relu", {"b" + n}, {out}, {}});
    in = out;
  }
  auto model = compile(g);
  ASSERT_EQ(model->steps().size(), static_cast<size_t>(triples));
  EXPECT_EQ(model->steps().back().name, "conv3332+bn3332+relu3332");
  const std::vector<float> x = test::random_values(16, 2);
  std::vector<double> want(x.begin(), x.end());
  const double scale = 2.0 * 0.5 / std::sqrt(1.0 + 1e-5);  // conv, then BN
  for (int i = 0; i < triples; ++i)
    for (double& v : want) v = std::max(v * scale, 0.0);
  EXPECT_LT(test::max_rel_error(run(model, x), std::vector<float>(want.begin(), want.end())), 1e-4);
}

// Identities listed in reverse order, and a dead branch as long: the clean-up passes
// leave the one Relu.
TEST(LongChains, IdentitiesAndDeadNodes) {
  Graph g = chain_start();
  for (int i = kNodes - 2; i >= 0; --i)
    g.nodes.push_back({"id" + std::to_string(i), "Identity", {tensor(i - 1)}, {tensor(i)}, {}});
  g.nodes.push_back({"relu", "Relu", {tensor(kNodes - 2)}, {"y"}, {}});
  for (int i = 0; i < kNodes; ++i)
    g.nodes.push_back({"dead" + std::to_string(i),
                       "Tanh",
                       {i == 0 ? "x" : "d" + std::to_string(i - 1)},
                       {"d" + std::to_string(i)},
                       {}});
  auto model = compile(g);
  ASSERT_EQ(model->steps().size(), 1u);
  EXPECT_EQ(model->steps()[0].name, "relu");
  EXPECT_EQ(model->pass_logs()[0].actions.size(), static_cast<size_t>(kNodes - 1));
  EXPECT_EQ(model->pass_logs()[1].actions.size(), static_cast<size_t>(kNodes));
  const std::vector<float> x = test::random_values(16, 3);
  EXPECT_EQ(run(model, x), relu(x));
}

}  // namespace
}  // namespace minfer
