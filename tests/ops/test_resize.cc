// Resize and Upsample against values PyTorch's F.interpolate gives (written here) and
// against loops written from ONNX's definitions.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

TestTensor omitted() {
  return {};
}

Attributes resize_attrs(const std::string& mode, const std::string& transform, const std::string& nearest = "") {
  Attributes a;
  a.set("mode", mode);
  a.set("coordinate_transformation_mode", transform);
  if (!nearest.empty()) a.set("nearest_mode", nearest);
  return a;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "at " << i;
}

const std::vector<float> kSquare = {1, 2, 3, 4};

// F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=False) exports as
// linear with pytorch_half_pixel.
TEST(Resize, BilinearPytorchHalfPixelMatchesTorch) {
  const OpResult r = run_op("Resize", {input({1, 1, 2, 2}, kSquare), omitted(), weight({4}, {1, 1, 2, 2})},
                            resize_attrs("linear", "pytorch_half_pixel"));
  ASSERT_EQ(r.shapes[0], (Shape{1, 1, 4, 4}));
  expect_near_all(r.outputs[0], {1.0f, 1.25f, 1.75f, 2.0f, 1.5f, 1.75f, 2.25f, 2.5f,  //
                                 2.5f, 2.75f, 3.25f, 3.5f, 3.0f, 3.25f, 3.75f, 4.0f});
  // 3 FLOPs per output element for each of the two resized axes.
  EXPECT_EQ(r.cost.flops, 3 * 2 * 16);
  EXPECT_EQ(r.cost.bytes_read, 4 * 4);  // scales are not data
}

// F.interpolate(x, size=(3, 3), mode='bilinear', align_corners=True).
TEST(Resize, AlignCornersWithSizes) {
  const OpResult r = run_op("Resize", {input({1, 1, 2, 2}, kSquare), omitted(), omitted(), weight({4}, {1, 1, 3, 3})},
                            resize_attrs("linear", "align_corners"));
  ASSERT_EQ(r.shapes[0], (Shape{1, 1, 3, 3}));
  expect_near_all(r.outputs[0], {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
}

// 1-D, 5 -> 3 elements: torch's nearest (asymmetric, floor) gives [0, 1, 3], its linear
// (align_corners=False) [1/3, 2, 11/3].
TEST(Resize, NearestFloorAndLinearOnOneAxis) {
  const std::vector<float> x = {0, 1, 2, 3, 4};
  const OpResult nearest = run_op("Resize", {input({1, 1, 5}, x), omitted(), omitted(), weight({3}, {1, 1, 3})},
                                  resize_attrs("nearest", "asymmetric", "floor"));
  EXPECT_EQ(nearest.outputs[0], (std::vector<float>{0, 1, 3}));
  EXPECT_EQ(nearest.cost.flops, 0);
  const OpResult linear = run_op("Resize", {input({1, 1, 5}, x), omitted(), omitted(), weight({3}, {1, 1, 3})},
                                 resize_attrs("linear", "pytorch_half_pixel"));
  expect_near_all(linear.outputs[0], {1.0f / 3, 2, 11.0f / 3});
}

// half_pixel nearest, every rounding, against ONNX's definition written as a loop:
// x = (o + 0.5) / scale - 0.5, rounded by the mode, clamped to the axis.
TEST(Resize, NearestModesAgainstDefinition) {
  const std::vector<float> x = {10, 11, 12, 13};
  const double scale = 1.5;  // 4 -> 6 elements
  for (const char* mode : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    const OpResult r = run_op("Resize", {input({1, 4}, x), omitted(), weight({2}, {1, 1.5f})},
                              resize_attrs("nearest", "half_pixel", mode));
    ASSERT_EQ(r.shapes[0], (Shape{1, 6}));
    for (int64_t o = 0; o < 6; ++o) {
      const double p = (static_cast<double>(o) + 0.5) / scale - 0.5;
      const std::string m = mode;
      double i = m == "floor" ? std::floor(p) : m == "ceil" ? std::ceil(p) : std::floor(p);
      if (m == "round_prefer_floor" && p - std::floor(p) > 0.5) i += 1;
      if (m == "round_prefer_ceil" && p - std::floor(p) >= 0.5) i += 1;
      const auto at = static_cast<int64_t>(std::clamp(i, 0.0, 3.0));
      EXPECT_EQ(r.outputs[0][o], x[at]) << mode << " o=" << o;
    }
  }
}

// Opset 9's Upsample: scales as an input, nearest replicates pixels.
TEST(Upsample, NearestReplicates) {
  Attributes a;
  a.set("mode", std::string("nearest"));
  const OpResult r = run_op("Upsample", {input({1, 1, 2, 2}, kSquare), weight({4}, {1, 1, 2, 3})}, a);
  ASSERT_EQ(r.shapes[0], (Shape{1, 1, 4, 6}));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(r.outputs[0][i * 6 + j], kSquare[(i / 2) * 2 + j / 3]);
}

TEST(Resize, RefusesBadScalesAndBothForms) {
  EXPECT_NE(compile_error("Resize", {input({1, 4}, {}), omitted(), weight({2}, {1, -2})}).find("must be positive"),
            std::string::npos);
  EXPECT_NE(compile_error("Resize", {input({1, 4}, {}), omitted(), weight({2}, {1, 2}), weight({2}, {1, 8})})
                .find("exactly one of scales and sizes"),
            std::string::npos);
}

}  // namespace
}  // namespace minfer::test
