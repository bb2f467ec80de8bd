// Conversion between ONNX and net.json: converting and re-loading gives bit-identical
// outputs, on the bundled models, on a model with a folded shape subgraph and on every
// supported ONNX backend test model; written ONNX passes ONNX's own checker.
#include <gtest/gtest.h>
#include <onnx/checker.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "bench/cli_common.h"
#include "engine/engine.h"
#include "graph/netjson_loader.h"
#include "graph/netjson_writer.h"
#include "graph/onnx_loader.h"
#include "graph/onnx_writer.h"
#include "tests/cli_test_util.h"
#include "tests/onnx_test_util.h"
#include "tests/op_test_util.h"
#include "tests/temp_files.h"

namespace minfer::test {
namespace {

namespace fs = std::filesystem;

const std::string kModels = std::string(MINFER_SOURCE_DIR) + "/models/";

// The outputs of one run on deterministic inputs, as raw bytes.
std::vector<std::string> outputs_of(const Graph& graph) {
  auto model = compile(graph);
  Session s(model);
  cli::fill_inputs_deterministic(s, 7);
  s.run();
  std::vector<std::string> bytes;
  for (const std::string& name : model->graph().outputs) {
    auto y = s.output(name);
    bytes.emplace_back(reinterpret_cast<const char*>(y.data()), y.size_bytes());
  }
  return bytes;
}

Graph via_netjson(const Graph& graph, const std::string& dir) {
  const NetJsonFiles files = to_netjson(graph, "weights.bin");
  write_file(dir + "/model.json", files.json);
  if (!files.weights.empty()) write_file(dir + "/weights.bin", files.weights);
  return load_netjson(dir + "/model.json");
}

Graph via_onnx(const Graph& graph, const std::string& dir) {
  const std::string bytes = to_onnx(graph, fold_graph(graph).output_types);
  onnx::ModelProto proto;
  EXPECT_TRUE(proto.ParseFromString(bytes));
  onnx::checker::check_model(proto);  // throws on an invalid model
  write_file(dir + "/model.onnx", bytes);
  return load_onnx(dir + "/model.onnx");
}

void expect_same_graph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    EXPECT_EQ(a.nodes[i].name, b.nodes[i].name);
    EXPECT_EQ(a.nodes[i].op_type, b.nodes[i].op_type);
    EXPECT_EQ(a.nodes[i].inputs, b.nodes[i].inputs);
  }
  ASSERT_EQ(a.initializers.size(), b.initializers.size());
  for (const auto& [name, t] : a.initializers) {
    const Tensor& u = b.initializers.at(name);
    EXPECT_EQ(t.shape(), u.shape()) << name;
    ASSERT_EQ(t.size(), u.size()) << name;
    for (int64_t i = 0; i < t.size(); ++i) ASSERT_EQ(t.number(i), u.number(i)) << name << " " << i;
  }
}

TEST(ModelConversion, BundledModelsRoundTripBitForBit) {
  const Graph g = load_netjson(kModels + "small_cnn.json");
  const std::string dir = temp_dir("small_cnn");
  const Graph from_onnx = via_onnx(g, dir);
  expect_same_graph(g, from_onnx);
  const Graph back = via_netjson(from_onnx, dir);
  expect_same_graph(g, back);
  EXPECT_EQ(outputs_of(g), outputs_of(back));
  EXPECT_EQ(outputs_of(g), outputs_of(from_onnx));
}

TEST(ModelConversion, NetJsonWriterInlinesSmallTensorsOnly) {
  Graph g;
  g.name = "tiny";
  g.source = "<test>";
  g.inputs.push_back({"x", {1, 20}});
  g.outputs = {"y"};
  g.initializers["shape"] = Tensor({2}, std::vector<float>{4, -1});
  g.initializers["w"] = Tensor({20}, random_values(20, 3));
  g.nodes.push_back({"mul", "Mul", {"x", "w"}, {"m"}, {}});
  g.nodes.push_back({"reshape", "Reshape", {"m", "shape"}, {"y"}, {}});
  const NetJsonFiles files = to_netjson(g, "tiny.bin");
  EXPECT_NE(files.json.find("\"shape\": {\"shape\":[2],\"data\":[4.0,-1.0]}"), std::string::npos) << files.json;
  EXPECT_NE(files.json.find("\"w\": {\"shape\":[20],\"offset\":0}"), std::string::npos) << files.json;
  EXPECT_EQ(files.weights.size(), 80u);
  g.nodes[0].attrs.set("bad", std::nan(""));
  EXPECT_THROW(to_netjson(g, "tiny.bin"), ModelError);
}

// The shape subgraph folds once, when the graph is first compiled; both conversions keep its result.
TEST(ModelConversion, OnnxWithFoldedSubgraphConvertsBothWays) {
  OnnxBuilder b;
  b.input("x", {2, 3, 4}).output("y");
  b.initializer("w", {12, 5}, random_values(60, 4)).int_initializer("minus_one", {1}, {-1});
  b.int_initializer("zero", {}, {0}).int_initializer("axes", {1}, {0});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  b.node("Unsqueeze", {"n", "axes"}, {"n1"});
  set_attr(b.node("Concat", {"n1", "minus_one"}, {"target"}), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"flat"});
  b.node("MatMul", {"flat", "w"}, {"mm"});
  set_attr(b.node("Softmax", {"mm"}, {"y"}), "axis", int64_t{-1});
  const std::string dir = temp_dir("folded");
  const Graph g = fold_graph(load_onnx(b.save("model.onnx"))).graph;
  EXPECT_EQ(g.initializers.at("target").dtype(), DType::kInt64);
  const Graph json = via_netjson(g, dir);
  const Graph onnx = via_onnx(json, dir);
  EXPECT_EQ(onnx.initializers.at("target").dtype(), DType::kInt64);  // int64 in the file again
  EXPECT_EQ(onnx.initializers.at("target").values<int64_t>()[1], -1);
  EXPECT_EQ(outputs_of(g), outputs_of(json));
  EXPECT_EQ(outputs_of(g), outputs_of(onnx));
}

// Every ONNX backend test model the engine supports converts without changing a bit.
TEST(ModelConversion, BackendTestModelsRoundTripBitForBit) {
  int converted = 0;
  for (const char* suite : {"pytorch-converted", "pytorch-operator"}) {
    for (const auto& entry : fs::directory_iterator(fs::path(MINFER_ONNX_TESTDATA) / suite)) {
      const fs::path model = entry.path() / "model.onnx";
      Graph g;
      try {
        g = fold_graph(load_onnx(model.string())).graph;
        compile(g);
      } catch (const ModelError&) {
        continue;  // unsupported (or float64) models are engine_check's business
      }
      // net.json's inputs are float32 (an Embedding's int64 indices have no net.json form).
      if (std::any_of(g.inputs.begin(), g.inputs.end(),
                      [](const GraphInput& in) { return in.dtype != DType::kFloat32; }))
        continue;
      SCOPED_TRACE(model.string());
      const std::string dir = temp_dir(entry.path().filename().string());
      const Graph json = via_netjson(g, dir);
      expect_same_graph(g, json);
      EXPECT_EQ(outputs_of(g), outputs_of(json));
      EXPECT_EQ(outputs_of(g), outputs_of(via_onnx(json, dir)));
      ++converted;
    }
  }
  EXPECT_GE(converted, 60);
}

TEST(EngineConvertCli, ConvertsBothWaysWithAWeightsFile) {
  const std::string convert = MINFER_ENGINE_CONVERT;
  const std::string dir = temp_dir("cli");
  CommandResult r = run_command(convert + " " + kModels + "small_cnn.json " + dir + "/cnn.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_command(convert + " " + dir + "/cnn.onnx " + dir + "/cnn.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/cnn.bin"));
  const Graph original = load_netjson(kModels + "small_cnn.json"), converted = load_netjson(dir + "/cnn.json");
  expect_same_graph(original, converted);
  EXPECT_EQ(outputs_of(original), outputs_of(converted));
  r = run_command(convert + " " + dir + "/cnn.onnx " + dir + "/cnn.txt");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "engine_convert: " + dir + "/cnn.txt: unknown output format '.txt' (expected .json or .onnx)\n");
  EXPECT_FALSE(fs::exists(dir + "/cnn.txt"));
}

}  // namespace
}  // namespace minfer::test
