// net.json loading: the three initializer forms, preprocess and labels. Malformed
// models are in the bad-input catalogue (tests/bench/test_bad_inputs.cc).
#include <gtest/gtest.h>

#include <fstream>

#include "engine/engine.h"
#include "graph/netjson_loader.h"
#include "tests/op_test_util.h"

namespace minfer {
namespace {

const std::string kModels = std::string(MINFER_SOURCE_DIR) + "/models/";

TEST(NetJsonLoader, ReadsPreprocessAndLabels) {
  Graph g = load_netjson(kModels + "digits_cnn.json");
  ASSERT_EQ(g.preprocess.mean.size(), 1u);
  EXPECT_FLOAT_EQ(g.preprocess.mean[0], 0.305225f);
  EXPECT_FLOAT_EQ(g.preprocess.std[0], 0.318849f);
  EXPECT_EQ(g.labels_file, "digits_labels.txt");
  EXPECT_EQ(g.labels, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
  Graph plain = load_netjson(kModels + "small_cnn.json");  // neither: identity and no labels
  EXPECT_EQ(plain.preprocess.mean, std::vector<float>{0.0f});
  EXPECT_EQ(plain.preprocess.std, std::vector<float>{1.0f});
  EXPECT_TRUE(plain.labels.empty());
}

TEST(NetJsonLoader, ReadsAllThreeInitializerForms) {
  Graph g = load_netjson(kModels + "small_cnn.json");
  EXPECT_EQ(g.name, "small_cnn");
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].shape, (Shape{1, 3, 32, 32}));
  // offset: the bytes of small_cnn.bin at the initializer's offset
  std::ifstream raw(kModels + "small_cnn.bin", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(raw)), {});
  std::vector<float> floats(bytes.size() / 4);
  std::memcpy(floats.data(), bytes.data(), bytes.size());
  const Tensor& w2 = g.initializers.at("conv2.W");
  ASSERT_EQ(w2.size(), 16 * 8 * 9);
  EXPECT_TRUE(std::equal(w2.values<float>().begin(), w2.values<float>().end(), floats.begin() + 216));  // offset 864
  // data: inline values
  EXPECT_FLOAT_EQ(g.initializers.at("conv1.B").values<float>()[0], -0.07459f);
  // init: zeros, and random reproducible from its seed
  EXPECT_EQ(test::float_values(g.initializers.at("fc.B")), std::vector<float>(10, 0.0f));
  EXPECT_EQ(test::float_values(g.initializers.at("fc.W")), random_init({10, 1024}, 7));
}

TEST(NetJsonLoader, RandomInitIsHeUniformAndSeedDependent) {
  std::vector<float> a = random_init({64, 3, 3, 3}, 1), b = random_init({64, 3, 3, 3}, 2);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, random_init({64, 3, 3, 3}, 1));
  const float bound = std::sqrt(6.0f / 27.0f);
  double mean = 0;
  for (float x : a) {
    EXPECT_LE(std::fabs(x), bound);
    mean += x;
  }
  EXPECT_LT(std::fabs(mean / a.size()), 0.05);
  EXPECT_NE(default_seed("a"), default_seed("b"));
}

TEST(NetJsonLoader, EmptyOutputNameOmitsAnOptionalOutput) {
  Graph g = load_netjson(kModels + "lstm.json");
  const Node* lstm = g.find_node("lstm");
  ASSERT_NE(lstm, nullptr);
  EXPECT_EQ(lstm->outputs, (std::vector<std::string>{"", "lstm.Y_h"}));
}

// The message a document is refused with, or "" when it loads.
std::string load_error(const std::string& text) {
  try {
    parse_netjson(text, "m.json", kModels);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

// A valid one-node model with `extra` members (", \"key\": value") at the top level.
std::string relu_model(const std::string& extra = "") {
  return R"({"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["y"],
             "nodes": [{"name": "relu", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}])" +
         extra + "}";
}

TEST(NetJsonLoader, RefusesNestingDeeperThanTheLimitNamingWhere) {
  // A million levels used to overflow the stack (the error message dumped the value).
  const std::string million = std::string(1000000, '[') + std::string(1000000, ']');
  std::string where = "version";  // quoted up to 60 characters
  while (where.size() < 60) where += "[0]";
  EXPECT_EQ(load_error(relu_model(R"(, "version": )" + million)),
            "m.json: JSON nested more than 64 levels deep (at " + where.substr(0, 60) + "...)");
  // The top-level object and 63 arrays are 64 levels: accepted; one more is refused.
  auto doc_of_depth = [](int levels) {
    return relu_model(R"(, "doc": )" + std::string(levels - 1, '[') + std::string(levels - 1, ']'));
  };
  EXPECT_EQ(load_error(doc_of_depth(64)), "");
  EXPECT_NE(load_error(doc_of_depth(65)).find("JSON nested more than 64 levels deep (at doc[0]"), std::string::npos);
}

TEST(NetJsonLoader, RefusesDuplicateKeysInsteadOfKeepingTheLast) {
  EXPECT_EQ(load_error(relu_model(R"(, "outputs": ["x"])")),
            "m.json: key 'outputs' appears twice in the top level (JSON keys must be unique)");
  EXPECT_EQ(load_error(relu_model(R"(, "initializers": {"w": {"shape": [1], "data": [1]},
                                                        "w": {"shape": [1], "data": [2]}})")),
            "m.json: key 'w' appears twice in initializers (JSON keys must be unique)");
  const std::string attrs = R"({"inputs": [{"name": "x", "shape": [1, 1, 4, 4]}], "outputs": ["y", "z"], "nodes": [
      {"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["y"]},
      {"name": "pool", "op": "MaxPool", "inputs": ["x"], "outputs": ["z"],
       "attrs": {"kernel_shape": [2, 2], "strides": [1, 1], "strides": [2, 2]}}]})";
  EXPECT_EQ(load_error(attrs), "m.json: key 'strides' appears twice in nodes[1].attrs (JSON keys must be unique)");
  // The same key in different objects is no duplicate.
  EXPECT_EQ(load_error(relu_model(R"(, "preprocess": {"mean": [0.5]}, "doc": {"mean": 1})")), "");
}

TEST(NetJsonLoader, QuotesAtMostAShortPrefixOfAValue) {
  std::string big = "[";
  for (int i = 0; i < 100000; ++i) big += "1,";
  big += "1]";
  std::string prefix = "[";  // the excerpt: the first 60 characters, then "..."
  while (prefix.size() < 60) prefix += prefix.size() % 2 ? "1" : ",";
  EXPECT_EQ(load_error(relu_model(R"(, "version": )" + big)), "m.json: unsupported 'version' " + prefix + "...");
  const std::string long_name = std::string(1000000, 'n');
  EXPECT_EQ(load_error(relu_model(R"(, "name": [")" + long_name + R"("])")),
            "m.json: name must be a string, got [\"" + std::string(58, 'n') + "...");
}

TEST(NetJsonLoader, ShowsIntegersBeyond64BitsAsWritten) {
  // 2^64-1 used to read as -1 ("dimension -1 must be positive").
  EXPECT_EQ(load_error(R"({"inputs": [{"name": "x", "shape": [1, 18446744073709551615]}], "outputs": ["x"],
                           "nodes": []})"),
            "m.json: input 'x': dimension 18446744073709551615 is beyond the range of 64-bit integers");
  EXPECT_EQ(load_error(R"({"inputs": [{"name": "x", "shape": [1, 100000000000000000000000]}], "outputs": ["x"],
                           "nodes": []})"),
            "m.json: input 'x': dimension 1e+23 is beyond the range of 64-bit integers");
  EXPECT_EQ(load_error(R"({"inputs": [{"name": "x", "shape": [1, 1, 4, 4]}], "outputs": ["y"], "nodes": [
                             {"name": "pool", "op": "MaxPool", "inputs": ["x"], "outputs": ["y"],
                              "attrs": {"kernel_shape": [2, 2], "strides": [1, 18446744073709551615]}}]})"),
            "m.json: node 'pool' (MaxPool): attribute 'strides' value 18446744073709551615 is beyond the range of "
            "64-bit integers");
  EXPECT_EQ(load_error(R"({"inputs": [{"name": "x", "shape": [1, 1.5]}], "outputs": ["x"], "nodes": []})"),
            "m.json: input 'x': dimension must be an integer, got 1.5");
}

TEST(NetJsonLoader, AGraphWithNoOutputsIsRefused) {
  for (const char* nodes : {"[]", R"([{"name": "relu", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}])"}) {
    const std::string text =
        std::string(R"({"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": [], "nodes": )") + nodes + "}";
    try {
      compile(parse_netjson(text, "m.json", kModels));
      ADD_FAILURE() << "compiled " << text;
    } catch (const ModelError& e) {
      EXPECT_STREQ(e.what(), "m.json: the graph has no outputs");
    }
  }
}

}  // namespace
}  // namespace minfer
