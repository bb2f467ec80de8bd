// End-to-end: every bundled model loads, compiles and runs; totals match the papers.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numeric>

#include "bench/cli_common.h"
#include "engine/engine.h"

namespace minfer {
namespace {

const std::string kModels = std::string(MINFER_SOURCE_DIR) + "/models/";

std::vector<std::string> bundled_models() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(kModels))
    if (e.path().extension() == ".json") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(BundledModels, EveryModelRunsWithFiniteOutputs) {
  const auto paths = bundled_models();
  ASSERT_GE(paths.size(), 2u);
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    auto model = compile(load_model(path));
    Session s(model);
    cli::fill_inputs_deterministic(s);
    s.run();
    for (int v : model->output_values()) {
      auto out = s.output(model->values()[v].name);
      ASSERT_FALSE(out.empty());
      for (float x : out) ASSERT_TRUE(std::isfinite(x));
    }
  }
}

CompileOptions unfolded() {
  CompileOptions o;
  o.passes.fold_bn = false;
  return o;
}

TEST(BundledModels, MobileNetV1MatchesThePaper) {
  auto model = compile(load_model(kModels + "mobilenet_v1.json"), unfolded());
  // The MobileNet paper's 569 M mult-adds and 4.2 M parameters.
  EXPECT_EQ(model->total_cost().macs, 568'740'352);
  int64_t conv_and_fc_params = 0;
  for (const Step& s : model->steps())
    if (s.op_type == "Conv" || s.op_type == "Gemm") conv_and_fc_params += s.cost.params;
  // By hand: conv1 864 + depthwise 9*4960 + pointwise 3,139,584 + fc 1,025,000.
  EXPECT_EQ(conv_and_fc_params, 4'210'088);
  // With BatchNormalization's 4 per channel, Keras's MobileNet summary: 4,253,864.
  EXPECT_EQ(model->total_cost().params, 4'253'864);
  // Folded, each BatchNormalization's 4 values per channel become 1 conv bias per channel.
  auto folded = compile(load_model(kModels + "mobilenet_v1.json"));
  EXPECT_EQ(folded->total_cost().params, 4'210'088 + 43'776 / 4);
  EXPECT_EQ(folded->total_cost().macs, 568'740'352);
  Session s(model);
  cli::fill_inputs_deterministic(s);
  s.run();
  auto prob = s.output("prob");
  EXPECT_NEAR(std::accumulate(prob.begin(), prob.end(), 0.0), 1.0, 1e-4);
}

TEST(BundledModels, MobileNetV2WidthsMatchThePaper) {
  // The MobileNetV2 paper lists 300 M and 585 M multiply-adds for 1.0 and 1.4; the exact
  // counts of torchvision's architecture (channels rounded to multiples of 8):
  EXPECT_EQ(compile(load_model(kModels + "mobilenet_v2_1_0.json"))->total_cost().macs, 300'774'272);
  EXPECT_EQ(compile(load_model(kModels + "mobilenet_v2_1_4.json"))->total_cost().macs, 582'195'824);
  // torchvision's 3,504,872 trainable parameters plus BatchNormalization's running mean
  // and variance (2 x 17,056 channels), which the engine counts as parameters it reads.
  EXPECT_EQ(compile(load_model(kModels + "mobilenet_v2_1_0.json"), unfolded())->total_cost().params,
            3'504'872 + 2 * 17'056);
}

TEST(BundledModels, MobileNetV2MemoryPlanIsOptimalAndFarBelowNaive) {
  auto model = compile(load_model(kModels + "mobilenet_v2_1_0.json"));
  EXPECT_LE(model->arena_bytes(), model->lower_bound_bytes());
  // The naive sum holds every step's scratch too: 4.5x the arena where the pointwise
  // convolutions run the direct kernel (no scratch), 5x on the scalar target.
  EXPECT_GE(model->naive_activation_bytes(), 4 * model->arena_bytes());
}

TEST(MemoryPlan, ElementwiseOpsRunInPlaceButNeverOverGraphInputs) {
  CompileOptions unfused;  // keeps the Relu steps, whose in-place runs are under test
  unfused.passes.fuse = false;
  auto model = compile(load_model(kModels + "small_cnn.json"), unfused);
  auto offset = [&](const char* name) { return model->values()[model->value_index(name)].offset; };
  EXPECT_EQ(offset("conv1"), offset("relu1"));  // relu1 overwrites conv1, which dies there
  EXPECT_EQ(offset("pool2"), offset("flat"));   // Flatten costs no copy
  Graph g;
  g.source = "<input_relu>";
  g.inputs.push_back({"x", {8}});
  g.nodes.push_back({"relu", "Relu", {"x"}, {"y"}, {}});
  g.outputs = {"y"};
  auto direct = compile(g);
  EXPECT_NE(direct->values()[direct->value_index("x")].offset, direct->values()[direct->value_index("y")].offset);
  Session s(direct);
  std::vector<float> x = {-1, 2, -3, 4, -5, 6, -7, 8};
  s.set_input("x", x);
  s.run();
  s.run();  // the input must survive the first run
  EXPECT_EQ(s.output("y")[1], 2.0f);
  EXPECT_EQ(s.input("x")[0], -1.0f);
}

TEST(BundledModels, LstmMatchesTheSeed) {
  auto model = compile(load_model(kModels + "lstm.json"));
  // Seed 000, 1.4: 4*H*(D+H) MACs per step, H 256, D 64, 32 steps; the head 256*10.
  EXPECT_EQ(model->steps()[0].cost.macs, 32 * 4 * 256 * (64 + 256));
  EXPECT_EQ(model->total_cost().macs, 10'485'760 + 2'560);
  // Weights 4*H*(D+H) plus the biases 8H; the head 2,570.
  EXPECT_EQ(model->total_cost().params, 327'680 + 2'048 + 2'570);
  // The minimal plan's state and scratch: 4*B*H floats; then the GEMM's packing scratch.
  const nlohmann::json& details = model->steps()[0].facts().details;
  EXPECT_EQ(details["state_bytes"].get<int64_t>() + details["scratch_bytes"].get<int64_t>(), 4 * 4 * 256);
  EXPECT_EQ(model->steps()[0].facts().workspace_bytes,
            4 * 4 * 256 + details["gemm_scratch_bytes_per_thread"].get<int64_t>());
  EXPECT_EQ(model->steps()[0].outputs[0], -1);  // Y is omitted
}

TEST(BundledModels, DeconvDecoderCostsAndMethodsAgree) {
  // By hand: project 100*16384; up1 and up2 4*4*256*128*8*8 and 4*4*128*64*16*16 (col2im,
  // Kh*Kw*Cin*Cout*Hin*Win), up3 4*4*64*3*32*32; the conv method counts the output
  // positions instead of the input's, four times as many at stride 2.
  const int64_t project = 1'638'400, col2im = 33'554'432 + 33'554'432 + 3'145'728;
  auto by_col2im = compile(load_model(kModels + "deconv_decoder.json"));
  EXPECT_EQ(by_col2im->total_cost().macs, project + col2im);
  CompileOptions conv_method;
  conv_method.attribute_overrides.push_back({"ConvTranspose", "method", std::string("conv")});
  auto by_conv = compile(load_model(kModels + "deconv_decoder.json"), conv_method);
  EXPECT_EQ(by_conv->total_cost().macs, project + 4 * col2im);
  Session a(by_col2im), b(by_conv);
  cli::fill_inputs_deterministic(a);
  cli::fill_inputs_deterministic(b);
  a.run();
  b.run();
  EXPECT_EQ(a.shape("image"), (Shape{1, 3, 64, 64}));
  auto ia = a.output("image"), ib = b.output("image");
  double worst = 0, spread = 0;
  for (size_t i = 0; i < ia.size(); ++i) {
    worst = std::max(worst, double(std::fabs(ia[i] - ib[i])));
    spread = std::max(spread, double(std::fabs(ia[i])));
  }
  EXPECT_LT(worst, 1e-4);
  EXPECT_GT(spread, 1e-3);  // not a constant image
}

TEST(BundledModels, RunsAreDeterministicAndProfiled) {
  auto model = compile(load_model(kModels + "small_cnn.json"));
  Session a(model), b(model);
  cli::fill_inputs_deterministic(a);
  cli::fill_inputs_deterministic(b);
  a.run();
  a.run();
  b.run();
  auto oa = a.output("prob"), ob = b.output("prob");
  EXPECT_TRUE(std::equal(oa.begin(), oa.end(), ob.begin()));
  EXPECT_EQ(a.profile().runs(), 2u);
  EXPECT_EQ(a.profile().step_samples(0).size(), 2u);
  // small_cnn by hand: conv1 3*3*3*8*32*32, conv2 3*3*8*16*16*16, fc 1024*10.
  EXPECT_EQ(model->total_cost().macs, 221184 + 294912 + 10240);
}

TEST(Session, RejectsWrongInputs) {
  auto model = compile(load_model(kModels + "small_cnn.json"));
  Session s(model);
  std::vector<float> wrong(5);
  EXPECT_THROW(s.set_input("image", wrong), UsageError);
  EXPECT_THROW(s.set_input("nope", wrong), UsageError);
  EXPECT_THROW(s.output("nope"), UsageError);
}

TEST(ModelLoader, InputShapeOverride) {
  Graph g = load_model(kModels + "small_cnn.json");
  EXPECT_THROW(override_input_shapes(g, {{"nope", {1}}}), UsageError);
  EXPECT_THROW(parse_input_shapes("image:1,x"), UsageError);
  EXPECT_EQ(parse_input_shapes("image:2,3,32,32").at("image"), (Shape{2, 3, 32, 32}));
  override_input_shapes(g, parse_input_shapes("image:2,3,32,32"));
  // The classifier's weights fix the flattened width, so a larger batch still compiles...
  auto model = compile(g);
  EXPECT_EQ(model->values()[model->value_index("prob")].type.shape, (Shape{2, 10}));
  // ...but a different spatial size cannot reach the Gemm's 1024 inputs.
  Graph g2 = load_model(kModels + "small_cnn.json");
  override_input_shapes(g2, parse_input_shapes("image:1,3,64,64"));
  EXPECT_THROW(compile(g2), ModelError);
}

}  // namespace
}  // namespace minfer
