// engine_bench reports exactly the worked numbers of the notes the project grew from (docs/cost-model.md's worked
// examples) on the nets built from them (models/seed/), and the separable pair with its saving.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/bench/engine_bench_runner.h"

namespace minfer::test {
namespace {

// BN folding off, so the ops keep the names the nets give them (folding changes no MACs).
nlohmann::json report(const std::string& model) {
  CommandResult r = run_engine_bench("--model " + kSourceDir + "/models/seed/" + model +
                                     " --num_runs 1 --warmup_runs 0 --format json --fold_bn 0");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

const nlohmann::json& op(const nlohmann::json& report, const std::string& name) {
  for (const auto& o : report["ops"])
    if (o["name"] == name) return o;
  throw std::runtime_error("no op " + name);
}

TEST(SeedExamples, DepthwiseSeparable) {
  const nlohmann::json r = report("depthwise_separable.json");
  EXPECT_EQ(op(r, "dw")["macs"], 7'225'344);  // 3*3*64*112*112
  EXPECT_EQ(op(r, "dw")["kind"], "depthwise");
  EXPECT_EQ(op(r, "pw")["macs"], 102'760'448);  // 64*112*112*128
  EXPECT_EQ(op(r, "pw")["kind"], "pointwise");
  EXPECT_EQ(r["totals"]["macs"], 109'985'792);
  ASSERT_EQ(r["separable_pairs"].size(), 1u);
  const auto& p = r["separable_pairs"][0];
  EXPECT_EQ(p["separable_macs"], 109'985'792);
  EXPECT_EQ(p["regular_macs"], 924'844'032);
  EXPECT_NEAR(p["ratio"].get<double>(), 8.4, 0.01);  // the notes' "about 8.4 times"
}

TEST(SeedExamples, RegularConvolution) {
  const nlohmann::json r = report("regular_conv_3x3.json");
  EXPECT_EQ(r["totals"]["macs"], 924'844'032);  // 3*3*64*112*112*128
  EXPECT_EQ(op(r, "conv")["kind"], "regular");
}

TEST(SeedExamples, MobileNetV2ExpansionBlock) {
  const nlohmann::json r = report("mobilenet_v2_expansion_block.json");
  EXPECT_EQ(r["totals"]["macs"], 968'196'096);  // (3*3 + 128 + 64) * 384 * 112 * 112
  EXPECT_EQ(op(r, "expand")["macs"], 308'281'344);
  EXPECT_EQ(op(r, "dw")["macs"], 43'352'064);
  EXPECT_EQ(op(r, "project")["macs"], 616'562'688);
  ASSERT_EQ(r["separable_pairs"].size(), 1u);  // dw -> project; expand precedes the depthwise
  EXPECT_EQ(r["separable_pairs"][0]["pointwise"], "project");
}

TEST(SeedExamples, MaxPool) {
  const nlohmann::json r = report("max_pool_2x2.json");
  EXPECT_EQ(r["totals"]["flops"], 1'605'632);  // 112*112*128
  EXPECT_EQ(r["totals"]["macs"], 0);
}

TEST(SeedExamples, MatMul) {
  const nlohmann::json r = report("matmul.json");
  EXPECT_EQ(r["totals"]["flops"], 2 * 300 * 100);  // [1,M] x [M,N] = 2*M*N
  EXPECT_EQ(r["totals"]["macs"], 30'000);
}

}  // namespace
}  // namespace minfer::test
