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

}  // namespace
}  // namespace minfer
