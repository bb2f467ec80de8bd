// engine_bench --compare as a user runs it: ratios against hand-computed costs on small
// models, per-side settings, the JSON document, and one-line refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/bench/engine_bench_runner.h"
#include "tests/temp_files.h"

namespace minfer::test {
namespace {

namespace fs = std::filesystem;

const std::string kMachine = " --peak_gflops 100 --bandwidth_gbs 10";

CommandResult bench(const std::string& args) {
  return run_engine_bench(args + kMachine);
}

// A net.json file in a fresh temporary directory, removed with the fixture.
class CompareCli : public testing::Test {
 protected:
  void SetUp() override { dir_ = test::temp_dir("compare"); }

  std::string model(const std::string& name, const std::string& input, const std::string& initializers,
                    const std::string& nodes, const std::string& output) {
    const fs::path path = dir_ / (name + ".json");
    std::ofstream(path) << R"({"format": "net.json", "version": 1, "name": ")" << name
                        << R"(", "inputs": [{"name": "x", "shape": )" << input << R"(}], "outputs": [")" << output
                        << R"("], "initializers": {)" << initializers << R"(}, "nodes": [)" << nodes << "]}";
    return path.string();
  }

  // x 1x4x8x8 -> Conv 3x3 4->8 (no bias) -> BatchNormalization -> Relu.
  std::string conv_bn_relu() {
    return model("conv_bn_relu", "[1, 4, 8, 8]",
                 R"("W": {"shape": [8, 4, 3, 3], "init": "random"},
                    "s": {"shape": [8], "data": [1, 2, 3, 4, 5, 6, 7, 8]},
                    "b": {"shape": [8], "data": [0, 1, 0, 1, 0, 1, 0, 1]},
                    "m": {"shape": [8], "data": [0, 0, 1, 1, 0, 0, 1, 1]},
                    "v": {"shape": [8], "data": [1, 1, 1, 1, 2, 2, 2, 2]})",
                 R"({"name": "conv", "op": "Conv", "inputs": ["x", "W"], "outputs": ["c"],
                     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}},
                    {"name": "bn", "op": "BatchNormalization", "inputs": ["c", "s", "b", "m", "v"], "outputs": ["n"]},
                    {"name": "relu", "op": "Relu", "inputs": ["n"], "outputs": ["y"]})",
                 "y");
  }

  // x 1x8x16x16 -> a regular 3x3 Conv 8->16, and its depthwise-separable replacement.
  std::string regular() {
    return model("regular", "[1, 8, 16, 16]", R"("W": {"shape": [16, 8, 3, 3], "init": "random"})",
                 R"({"name": "conv", "op": "Conv", "inputs": ["x", "W"], "outputs": ["y"],
                     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}})",
                 "y");
  }
  std::string separable() {
    return model(
        "separable", "[1, 8, 16, 16]",
        R"("dw.W": {"shape": [8, 1, 3, 3], "init": "random"}, "pw.W": {"shape": [16, 8, 1, 1], "init": "random"})",
        R"({"name": "dw", "op": "Conv", "inputs": ["x", "dw.W"], "outputs": ["d"],
                     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "group": 8}},
                    {"name": "pw", "op": "Conv", "inputs": ["d", "pw.W"], "outputs": ["y"],
                     "attrs": {"kernel_shape": [1, 1]}})",
        "y");
  }

  fs::path dir_;
};

nlohmann::json compare_json(const std::string& args) {
  CommandResult r = bench(args + " --num_runs 3 --warmup_runs 1 --format json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

const nlohmann::json& metric(const nlohmann::json& c, const std::string& key) {
  for (const auto& m : c["metrics"])
    if (m["key"] == key) return m;
  throw std::runtime_error("no metric " + key);
}

void expect_metric(const nlohmann::json& c, const std::string& key, double a, double b) {
  const auto& m = metric(c, key);
  EXPECT_DOUBLE_EQ(m["a"].get<double>(), a) << key;
  EXPECT_DOUBLE_EQ(m["b"].get<double>(), b) << key;
  EXPECT_NEAR(m["ratio"].get<double>(), b / a, 1e-12) << key;
}

TEST_F(CompareCli, RegularConvAgainstDepthwiseSeparable) {
  const auto c = compare_json("--compare " + regular() + " " + separable());
  // Regular: 3*3*8 * 16*16 * 16 MACs, 16*8*3*3 weights; reads x and W, writes 16x16x16.
  // Separable: depthwise 3*3*8*16*16 + pointwise 8*16*16*16 MACs; 8*9 + 16*8 weights.
  expect_metric(c, "nodes", 1, 2);
  expect_metric(c, "macs", 294'912, 18'432 + 32'768);
  expect_metric(c, "flops", 2 * 294'912, 2 * (18'432 + 32'768));
  expect_metric(c, "params", 1152, 72 + 128);
  expect_metric(c, "weight_bytes", 4 * 1152, 4 * 200);
  const double regular_bytes = 4 * (2048 + 1152 + 4096);
  const double separable_bytes = 4 * (2048 + 72 + 2048) + 4 * (2048 + 128 + 4096);
  expect_metric(c, "bytes_moved", regular_bytes, separable_bytes);  // separable moves more: 1.43x
  expect_metric(c, "arithmetic_intensity", 2 * 294'912 / regular_bytes, 2 * 51'200 / separable_bytes);
  EXPECT_FALSE(c["same_model"]);
  EXPECT_FALSE(c.contains("node_changes"));  // different models: no node-by-node diff
  // Both reports are there whole, each with the runs asked for.
  ASSERT_EQ(c["sides"].size(), 2u);
  EXPECT_EQ(c["sides"][0]["label"], "A");
  EXPECT_EQ(c["sides"][1]["report"]["model"]["name"], "separable");
  for (const auto& side : c["sides"]) {
    EXPECT_EQ(side["report"]["runs"], 3);
    EXPECT_EQ(side["report"]["warmup_runs"], 1);
    EXPECT_EQ(side["report"]["machine"]["peak_source"], "flag");
  }
  const auto& median = metric(c, "latency_median_ms");
  EXPECT_EQ(median["a"], c["sides"][0]["report"]["latency_ms"]["median"]);
  EXPECT_NEAR(median["ratio"].get<double>(), median["b"].get<double>() / median["a"].get<double>(), 1e-12);
  // Time by op type: one regular conv in A, a depthwise and a pointwise in B.
  std::map<std::string, std::pair<int, int>> counts;
  for (const auto& t : c["op_types"]) counts[t["type"]] = {t["a"]["count"], t["b"]["count"]};
  EXPECT_EQ(counts, (std::map<std::string, std::pair<int, int>>{
                        {"Conv/regular", {1, 0}}, {"Conv/depthwise", {0, 1}}, {"Conv/pointwise", {0, 1}}}));
}

TEST_F(CompareCli, FoldingBatchNormOnOneModel) {
  // Without fusion, so the Relu stays its own node on both sides.
  const auto c = compare_json("--model " + conv_bn_relu() + " --fuse 0 --compare \"--fold_bn 0\" \"--fold_bn 1\"");
  // A: conv (2*18,432 FLOPs; reads x 256 + W 288 floats, writes 512), BN (2 FLOPs and 4
  // params per element/channel), Relu (1 FLOP per element). B: conv+bn with a bias of 8.
  expect_metric(c, "nodes", 3, 2);
  expect_metric(c, "macs", 18'432, 18'432);
  expect_metric(c, "flops", 36'864 + 1024 + 512, 36'864 + 512);
  expect_metric(c, "params", 288 + 32, 288 + 8);
  expect_metric(c, "bytes_moved", 4 * (256 + 288 + 512) + 4 * (512 + 32 + 512) + 4 * (512 + 512),
                4 * (256 + 288 + 8 + 512) + 4 * (512 + 512));
  EXPECT_TRUE(c["same_model"]);
  const auto& groups = c["node_changes"]["groups"];
  ASSERT_EQ(groups.size(), 1u);  // relu is the same on both sides
  ASSERT_EQ(groups[0]["a"].size(), 2u);
  EXPECT_EQ(groups[0]["a"][0]["name"], "conv");
  EXPECT_EQ(groups[0]["a"][1]["name"], "bn");
  EXPECT_EQ(groups[0]["a"][1]["type"], "BatchNormalization");
  ASSERT_EQ(groups[0]["b"].size(), 1u);
  EXPECT_EQ(groups[0]["b"][0]["name"], "conv+bn");
  EXPECT_EQ(groups[0]["a_total"]["flops"], 36'864 + 1024);
  EXPECT_EQ(groups[0]["b_total"]["flops"], 36'864);
  EXPECT_EQ(groups[0]["a_total"]["params"], 320);
  EXPECT_EQ(groups[0]["b_total"]["params"], 296);
  EXPECT_EQ(c["sides"][0]["spec"], "--fold_bn 0");
}

TEST_F(CompareCli, EachSideOverridesTheRunWideFlags) {
  const std::string decoder = kSourceDir + "/models/deconv_decoder.json";
  // The run-wide --deconv_method conv holds for A; B names col2im.
  const auto c = compare_json("--model " + decoder + " --deconv_method conv --compare \"\" \"--deconv_method col2im\"");
  expect_metric(c, "macs", 282'656'768, 71'892'992);
  EXPECT_EQ(c["sides"][0]["spec"], "");
  // Threads and LSTM plans per side, the model named inside the side.
  const std::string lstm = kSourceDir + "/models/lstm.json";
  const auto l = compare_json("--compare \"" + lstm + " --lstm_plan minimal\" \"--model " + lstm +
                              " --lstm_plan fused --num_threads 2\"");
  EXPECT_EQ(l["sides"][0]["report"]["ops"][0]["details"]["plan"], "minimal");
  EXPECT_EQ(l["sides"][1]["report"]["ops"][0]["details"]["plan"], "fused");
  EXPECT_EQ(l["sides"][0]["report"]["threads"], 1);
  EXPECT_EQ(l["sides"][1]["report"]["threads"], 2);
  // --clean and --input_shape per side.
  const auto s = compare_json("--model " + kSourceDir +
                              "/models/small_cnn.json --compare \"--clean 0\" "
                              "\"--clean 1 --input_shape image:2,3,32,32\"");
  expect_metric(s, "macs", s["sides"][0]["report"]["totals"]["macs"].get<double>(),
                2 * s["sides"][0]["report"]["totals"]["macs"].get<double>());
}

TEST_F(CompareCli, TextCsvMemoryPlanAndHtml) {
  const std::string sides = "--compare " + regular() + " " + separable() + " --num_runs 2";
  CommandResult t = bench(sides + " --memory_plan");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out.rfind("============================== Compare ==", 0), 0u) << t.out;
  EXPECT_NE(t.out.find("[B/A]"), std::string::npos);
  EXPECT_NE(t.out.find("MACs                                         294,912            51,200     0.174     5.760"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("By op type"), std::string::npos);
  EXPECT_EQ(t.out.find("Nodes that differ"), std::string::npos);  // two models
  EXPECT_NE(t.out.find("Side A:\n============================== Memory plan"), std::string::npos);
  EXPECT_NE(t.out.find("Side B:\n============================== Memory plan"), std::string::npos);

  CommandResult csv = bench(sides + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("metric,name,a,b,ratio\nnodes,nodes,1,2,2\nmacs,MACs,294912,51200,0.173611111\n", 0), 0u)
      << csv.out;

  const std::string html = (dir_ / "compare.html").string();
  CommandResult h = bench(sides + " --html " + html);
  ASSERT_EQ(h.exit_code, 0) << h.err;
  std::ifstream f(html);
  const std::string page((std::istreambuf_iterator<char>(f)), {});
  for (const char* s : {"<title>minfer compare: A: regular against B: separable</title>", "id=\"compare-ratio-chart\"",
                        "id=\"a-roofline-chart\"", "id=\"b-roofline-chart\""})
    EXPECT_NE(page.find(s), std::string::npos) << s;
}

TEST_F(CompareCli, RefusesNonsenseInOneLine) {
  const std::string a = regular(), b = separable();
  auto refused = [](const std::string& args, const std::string& message) {
    CommandResult r = bench(args);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_EQ(r.err, "engine_bench: " + message + "\n") << args;
    EXPECT_TRUE(r.out.empty()) << args;
  };
  refused("--compare " + a + " " + b + " " + a, "--compare takes two sides, A and B; '" + a + "' would be a third");
  refused("--compare " + a + " " + b + " --compare " + a + " " + b,
          "--compare given twice: it takes two sides, A and B, once");
  refused("--compare " + a + " /nonexistent/b.json",
          "--compare B: /nonexistent/b.json: cannot open the file (No such file or directory)");
  const std::string cycle = kSourceDir + "/tests/data/bad_models/cycle.json";
  refused("--compare " + cycle + " " + b,
          "--compare A: " + cycle + ": node 'loop_a' (Add): is part of a cycle (its inputs depend on its own outputs)");
  refused("--compare \"--fold_bn 0\" \"--fold_bn 1\"",
          "--compare A '--fold_bn 0': no model (name one in the side, or give --model)");
  refused("--compare \"" + a + " " + b + "\" " + b,
          "--compare A '" + a + " " + b + "': The following argument was not expected: " + b +
              " (a side takes a model, --model, --input_shape and the compile flags)");
  refused("--compare \"" + a + " --model " + b + "\" " + b,
          "--compare A '" + a + " --model " + b + "': names two models, '" + a + "' and '" + b + "'");
  refused("--compare " + a + " \"--fold_bn 2\"",
          "--compare B '--fold_bn 2': --fold_bn: 2 not in {0,1} (a side takes "
          "a model, --model, --input_shape and the compile flags)");
  refused("--compare " + a + " " + b + " --trace t.json",
          "--compare runs two sides: --image and --trace are for one model");
  refused("--num_runs 1", "--model is required (or --compare A B)");
  CommandResult one = run_engine_bench("--num_runs 1 --compare " + a);
  EXPECT_EQ(one.exit_code, 1);
  EXPECT_EQ(one.err, "engine_bench: --compare needs two sides, A and B (each a model and/or quoted flags)\n");
}

}  // namespace
}  // namespace minfer::test
