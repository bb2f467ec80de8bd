// What ONNX opsets 18 to 27 changed in the ops the engine runs (graph/onnx_loader.h lists
// them), each on a model of that opset built here, against values worked out by hand
// from the operator's definition.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine.h"
#include "graph/onnx_loader.h"
#include "tests/onnx_test_util.h"

namespace minfer::test {
namespace {

std::vector<float> run(const OnnxBuilder& b, const std::vector<float>& x, Shape* shape = nullptr) {
  auto model = compile(load_onnx(b.save("model.onnx")));
  Session s(model);
  s.set_input("x", x);
  s.run();
  const std::string& out = model->graph().outputs.at(0);
  if (shape) *shape = s.shape(out);
  auto y = s.output(out);
  return {y.begin(), y.end()};
}

std::string error_of(const OnnxBuilder& b) {
  try {
    compile(load_onnx(b.save("model.onnx")));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(loaded)";
}

// Opset 18: ReduceMean's axes are an input; noop_with_empty_axes keeps the data as it is.
TEST(NewerOpsets, ReductionsTakeTheirAxesAsAnInput) {
  OnnxBuilder b(18);
  b.input("x", {2, 3}).output("y").int_initializer("axes", {1}, {1});
  set_attr(b.node("ReduceMean", {"x", "axes"}, {"y"}), "keepdims", int64_t{0});
  Shape shape;
  EXPECT_EQ(run(b, {1, 2, 3, 4, 5, 9}, &shape), (std::vector<float>{2, 6}));
  EXPECT_EQ(shape, (Shape{2}));
  OnnxBuilder noop(18);
  noop.input("x", {2, 3}).output("y");
  set_attr(noop.node("ReduceMax", {"x"}, {"y"}), "noop_with_empty_axes", int64_t{1});
  EXPECT_EQ(run(noop, {1, 2, 3, 4, 5, 9}), (std::vector<float>{1, 2, 3, 4, 5, 9}));
}

// Opset 18's axes input of Pad, and opset 19's wrap mode: [0 1 2] padded 2 before and 1
// after on the last axis wraps around to [1 2 | 0 1 2 | 0].
TEST(NewerOpsets, PadWrapsOnTheAxesGiven) {
  OnnxBuilder b(19);
  b.input("x", {2, 3}).output("y").int_initializer("pads", {2}, {2, 1}).int_initializer("axes", {1}, {-1});
  set_attr(b.node("Pad", {"x", "pads", "", "axes"}, {"y"}), "mode", std::string("wrap"));
  Shape shape;
  EXPECT_EQ(run(b, {0, 1, 2, 3, 4, 5}, &shape), (std::vector<float>{1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3}));
  EXPECT_EQ(shape, (Shape{2, 6}));
}

// Opset 18's Resize: scales for the axes named only; sizes kept to the input's aspect
// ratio (not_larger: the smaller ratio of 2/4 and 2/6, 1/3, for both axes: 4x6 -> 1x2
// rounding half up); antialias refused where it would filter.
TEST(NewerOpsets, ResizeAxesAndAspectRatio) {
  OnnxBuilder up(18);
  up.input("x", {1, 1, 2, 2}).output("y").initializer("scales", {2}, {2, 2});
  onnx::NodeProto& n = up.node("Resize", {"x", "", "scales"}, {"y"});
  set_attr(n, "axes", std::vector<int64_t>{2, 3});
  set_attr(n, "coordinate_transformation_mode", std::string("asymmetric"));
  set_attr(n, "nearest_mode", std::string("floor"));
  Shape shape;
  EXPECT_EQ(run(up, {1, 2, 3, 4}, &shape), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  EXPECT_EQ(shape, (Shape{1, 1, 4, 4}));

  OnnxBuilder fit(18);
  fit.input("x", {1, 1, 4, 6}).output("y").int_initializer("sizes", {2}, {2, 2});
  onnx::NodeProto& f = fit.node("Resize", {"x", "", "", "sizes"}, {"y"});
  set_attr(f, "axes", std::vector<int64_t>{2, 3});
  set_attr(f, "keep_aspect_ratio_policy", std::string("not_larger"));
  set_attr(f, "coordinate_transformation_mode", std::string("asymmetric"));
  set_attr(f, "nearest_mode", std::string("floor"));
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i);
  // Output (0, j) reads input (floor(0 * 3), floor(j * 3)): elements 0 and 3.
  EXPECT_EQ(run(fit, x, &shape), (std::vector<float>{0, 3}));
  EXPECT_EQ(shape, (Shape{1, 1, 1, 2}));

  OnnxBuilder alias(18);
  alias.input("x", {1, 1, 4, 4}).output("y").initializer("scales", {4}, {1, 1, 0.5f, 0.5f});
  onnx::NodeProto& a = alias.node("Resize", {"x", "", "scales"}, {"y"}, "shrink");
  set_attr(a, "mode", std::string("linear"));
  set_attr(a, "antialias", int64_t{1});
  EXPECT_NE(error_of(alias).find("node 'shrink' (Resize): antialias when downscaling is not supported"),
            std::string::npos);
}

// Opset 19's half_pixel_symmetric: 4 -> floor(4 x 0.6) = 2 points, the 2.4-long output's
// rounding split around the centre: x = 2 (1 - 2 / 2.4) + (o + 0.5) / 0.6 - 0.5, so 2/3
// and 7/3, read linearly from [0 10 20 30].
TEST(NewerOpsets, ResizeHalfPixelSymmetric) {
  OnnxBuilder b(19);
  b.input("x", {1, 4}).output("y").initializer("scales", {2}, {1, 0.6f});
  onnx::NodeProto& n = b.node("Resize", {"x", "", "scales"}, {"y"});
  set_attr(n, "mode", std::string("linear"));
  set_attr(n, "coordinate_transformation_mode", std::string("half_pixel_symmetric"));
  const std::vector<float> y = run(b, {0, 10, 20, 30});
  ASSERT_EQ(y.size(), 2u);
  EXPECT_NEAR(y[0], 20.0 / 3, 1e-4);
  EXPECT_NEAR(y[1], 70.0 / 3, 1e-4);
}

// GroupNormalization: opset 18's scale and bias per group, 21's per channel, against
// the definition: each (n, group) over its channels and positions to mean 0, variance 1.
TEST(NewerOpsets, GroupNormalizationPerGroupThenPerChannel) {
  const int64_t n = 2, c = 6, groups = 3, hw = 5, per = c / groups;
  std::vector<float> x(n * c * hw);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37 % 23) * 0.25 - 2 + (i % 7 == 0 ? 5 : 0));
  const std::vector<float> gs = {0.5f, 2.0f, -1.0f}, gb = {0.25f, 0.0f, 1.5f};
  const std::vector<float> cs = {0.5f, 1.0f, 2.0f, -1.0f, 0.75f, 3.0f}, cb = {0, 1, 2, 3, 4, 5};
  for (int opset : {18, 21}) {
    const bool per_channel = opset == 21;
    OnnxBuilder b(opset);
    b.input("x", {n, c, hw}).output("y");
    b.initializer("scale", {per_channel ? c : groups}, per_channel ? cs : gs);
    b.initializer("bias", {per_channel ? c : groups}, per_channel ? cb : gb);
    onnx::NodeProto& node = b.node("GroupNormalization", {"x", "scale", "bias"}, {"y"});
    set_attr(node, "num_groups", groups);
    set_attr(node, "epsilon", 1e-3f);
    const std::vector<float> y = run(b, x);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t g = 0; g < groups; ++g) {
        const float* v = x.data() + (i * c + g * per) * hw;
        double mean = 0, var = 0;
        for (int64_t k = 0; k < per * hw; ++k) mean += v[k] / double(per * hw);
        for (int64_t k = 0; k < per * hw; ++k) var += (v[k] - mean) * (v[k] - mean) / double(per * hw);
        for (int64_t k = 0; k < per * hw; ++k) {
          const int64_t ch = g * per + k / hw;
          const double scale = per_channel ? cs[ch] : gs[g], bias = per_channel ? cb[ch] : gb[g];
          const double want = (v[k] - mean) / std::sqrt(var + 1e-3) * scale + bias;
          EXPECT_NEAR(y[(i * c + g * per) * hw + k], want, 1e-5 * (1 + std::fabs(want))) << "opset " << opset;
        }
      }
  }
}

// CastLike takes the element type of its second input: 1.7 and -2.3 to int64 truncate.
TEST(NewerOpsets, CastLikeTakesTheSecondInputsType) {
  OnnxBuilder b(19);
  b.input("x", {2}).output("y").int_initializer("like", {1}, {0});
  b.node("CastLike", {"x", "like"}, {"i"});
  set_attr(b.node("Cast", {"i"}, {"y"}), "to", int64_t{1});
  EXPECT_EQ(run(b, {1.7f, -2.3f}), (std::vector<float>{1, -2}));
}

}  // namespace
}  // namespace minfer::test
