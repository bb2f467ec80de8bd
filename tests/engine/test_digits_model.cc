// The bundled digits CNN, trained for real: every sample PNG is classified as its
// digit, with PyTorch's probabilities, through the engine's own image input.
#include <gtest/gtest.h>

#include <fstream>

#include "engine/engine.h"

namespace minfer {
namespace {

const std::string kModels = std::string(MINFER_SOURCE_DIR) + "/models/";

TEST(DigitsModel, ClassifiesEveryBundledSampleAsPyTorchDoes) {
  auto model = compile(load_model(kModels + "digits_cnn.json"));
  ASSERT_EQ(model->graph().labels.size(), 10u);
  EXPECT_EQ(model->graph().labels[7], "7");
  Session s(model);
  std::ifstream f(kModels + "samples/expected.json");
  ASSERT_TRUE(f) << "models/samples/expected.json is missing: run models/train_digits.py";
  const nlohmann::json expected = nlohmann::json::parse(f);
  ASSERT_EQ(expected.size(), 10u);
  for (const auto& [file, want] : expected.items()) {
    SCOPED_TRACE(file);
    const std::string image = kModels + "samples/" + file;
    set_image_input(s, image, model->graph().preprocess);
    s.run();
    const auto prob = s.output("prob");
    const std::vector<float> torch_prob = want["prob"];
    ASSERT_EQ(prob.size(), torch_prob.size());
    for (size_t k = 0; k < prob.size(); ++k) EXPECT_NEAR(prob[k], torch_prob[k], 1e-4) << k;
    const nlohmann::json c = classification_report(s, image, 3);
    EXPECT_EQ(c["top"][0]["index"], want["class"]);
    EXPECT_EQ(c["top"][0]["label"], std::to_string(want["class"].get<int>()));
    EXPECT_EQ(c["output"], "prob");
  }
}

// Inputs persist across runs: a caller sets them once and runs many times.
TEST(DigitsModel, RepeatedRunsKeepTheInput) {
  auto model = compile(load_model(kModels + "digits_cnn.json"));
  Session s(model);
  set_image_input(s, kModels + "samples/digit_3.png", model->graph().preprocess);
  s.run();
  const auto out = s.output("prob");
  const std::vector<float> first(out.begin(), out.end());
  for (int i = 0; i < 3; ++i) s.run();
  const auto again = s.output("prob");
  EXPECT_TRUE(std::equal(first.begin(), first.end(), again.begin()));
}

}  // namespace
}  // namespace minfer
