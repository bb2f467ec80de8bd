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

// PyTorch's nn.Upsample(scale_factor=s) exports Resize with the scales as float32, and
// PyTorch and ONNX Runtime size and place in float (values written from torch 1.13):
// 10 x 0.7f is 7 elements (6.9999999 in double); nearest's output 3 of scale 0.6 reads
// input 5 (3 / 0.6f is 5 in float, 4.9999998 in double).
TEST(Resize, ScalesSizeAndPlaceInFloatAsPyTorch) {
  std::vector<float> x(10);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  const OpResult down = run_op("Resize", {input({1, 10}, x), omitted(), weight({2}, {1, 0.7f})},
                               resize_attrs("nearest", "asymmetric", "floor"));
  ASSERT_EQ(down.shapes[0], (Shape{1, 7}));
  const OpResult nearest = run_op("Resize", {input({1, 10}, x), omitted(), weight({2}, {1, 0.6f})},
                                  resize_attrs("nearest", "asymmetric", "floor"));
  EXPECT_EQ(nearest.outputs[0], (std::vector<float>{0, 1, 3, 5, 6, 8}));  // torch: [0, 1, 3, 5, 6, 8]
}

// align_corners maps the corners of the rounded output, as PyTorch's
// F.interpolate(x, scale_factor=0.6, mode='linear', align_corners=True) does: 4 -> 2
// elements read inputs 0 and 3 (ONNX's reference maps 2.4 elements: 0 and 2.14).
TEST(Resize, AlignCornersMapsTheRoundedOutput) {
  const OpResult r = run_op("Resize", {input({1, 4}, {1, 2, 3, 4}), omitted(), weight({2}, {1, 0.6f})},
                            resize_attrs("linear", "align_corners"));
  ASSERT_EQ(r.shapes[0], (Shape{1, 2}));
  expect_near_all(r.outputs[0], {1, 4});
  // 5 -> 7 elements (scale 1.5, 7.5 unrounded): output o at o * 4 / 6.
  const std::vector<float> ramp = {0, 1, 2, 3, 4};
  const OpResult up = run_op("Resize", {input({1, 5}, ramp), omitted(), weight({2}, {1, 1.5f})},
                             resize_attrs("linear", "align_corners"));
  ASSERT_EQ(up.shapes[0], (Shape{1, 7}));
  for (int64_t o = 0; o < 7; ++o) EXPECT_NEAR(up.outputs[0][o], static_cast<float>(o) * 4 / 6, 1e-6) << o;
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

// ONNX's linear and cubic (a = -0.75) weights of the taps around point p of an axis of
// n elements (align_corners), as (index, weight) pairs with indices clamped.
std::vector<std::pair<int64_t, double>> definition_taps(const std::string& mode, int64_t n, int64_t out, int64_t o) {
  const double p = out == 1 ? 0 : static_cast<double>(o) * static_cast<double>(n - 1) / static_cast<double>(out - 1);
  const auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, n - 1); };
  if (n == out) return {{o, 1.0}};
  const int64_t base = static_cast<int64_t>(std::floor(p));
  const double r = p - static_cast<double>(base);
  if (mode == "linear") return {{clamp(base), 1 - r}, {clamp(base + 1), r}};
  const auto cubic = [](double t) {  // Keys' kernel, a = -0.75
    const double a = -0.75;
    t = std::fabs(t);
    return t <= 1 ? ((a + 2) * t - (a + 3)) * t * t + 1 : t < 2 ? ((t - 5) * t + 8) * t * a - 4 * a : 0.0;
  };
  std::vector<std::pair<int64_t, double>> taps;
  for (int64_t k = -1; k <= 2; ++k) taps.push_back({clamp(base + k), cubic(static_cast<double>(k) - r)});
  return taps;
}

// Three axes resized at once (channels too: output rows then read several input rows),
// up and down, linear and cubic, 1 and 2 threads, against the tensor product of each
// axis's taps written from ONNX's definition.
TEST(Resize, SeveralAxesMatchTheDefinition) {
  const Shape in = {2, 3, 5, 7}, out = {2, 4, 9, 4};
  const std::vector<float> x = random_values(num_elements(in), 3);
  for (const std::string mode : {"linear", "cubic"})
    for (int threads : {1, 2}) {
      const OpResult r = run_op("Resize", {input(in, x), omitted(), omitted(), weight({4}, {2, 4, 9, 4})},
                                resize_attrs(mode, "align_corners"), 1, threads);
      ASSERT_EQ(r.shapes[0], out);
      int64_t i = 0;
      for (int64_t n = 0; n < out[0]; ++n)
        for (int64_t c = 0; c < out[1]; ++c)
          for (int64_t h = 0; h < out[2]; ++h)
            for (int64_t w = 0; w < out[3]; ++w, ++i) {
              double want = 0;
              for (auto [ic, wc] : definition_taps(mode, in[1], out[1], c))
                for (auto [ih, wh] : definition_taps(mode, in[2], out[2], h))
                  for (auto [iw, ww] : definition_taps(mode, in[3], out[3], w))
                    want += wc * wh * ww * x[((n * in[1] + ic) * in[2] + ih) * in[3] + iw];
              ASSERT_NEAR(r.outputs[0][i], want, 1e-5) << mode << " threads " << threads << " at " << i;
            }
    }
}

// Integral upsamplings of rows wider than a vector (nearest repeats each element, in
// vectors at 2x; linear resizes a row's inner elements a period of outputs at a time at
// 2x and 8x, and sums two resized input rows in one pass), 1 and 2 threads,
// against the definitions: nearest's index floor(o / s) (asymmetric), linear's two taps
// around (o + 0.5) / s - 0.5 clamped (half_pixel), each axis's weights multiplied.
TEST(Resize, IntegralUpsamplingsMatchTheDefinition) {
  const Shape in = {1, 3, 5, 37};
  const std::vector<float> x = random_values(num_elements(in), 5);
  const auto linear_taps = [](int64_t n, int64_t s, int64_t o) {
    const double p = (static_cast<double>(o) + 0.5) / static_cast<double>(s) - 0.5;
    const int64_t base = static_cast<int64_t>(std::floor(p));
    const double r = p - static_cast<double>(base);
    const auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, n - 1); };
    return std::vector<std::pair<int64_t, double>>{{clamp(base), 1 - r}, {clamp(base + 1), r}};
  };
  for (int64_t scale : {2, 3, 8})
    for (const std::string mode : {"nearest", "linear"})
      for (int threads : {1, 2}) {
        const Shape out = {1, 3, 5 * scale, 37 * scale};
        const float s = static_cast<float>(scale);
        const OpResult r =
            run_op("Resize", {input(in, x), omitted(), weight({4}, {1, 1, s, s})},
                   resize_attrs(mode, mode == "nearest" ? "asymmetric" : "half_pixel", "floor"), 1, threads);
        ASSERT_EQ(r.shapes[0], out);
        int64_t i = 0;
        for (int64_t c = 0; c < out[1]; ++c)
          for (int64_t h = 0; h < out[2]; ++h)
            for (int64_t w = 0; w < out[3]; ++w, ++i) {
              const float* plane = x.data() + c * in[2] * in[3];
              if (mode == "nearest") {
                ASSERT_EQ(r.outputs[0][i], plane[h / scale * in[3] + w / scale]) << scale << " at " << i;
                continue;
              }
              double want = 0;
              for (auto [ih, wh] : linear_taps(in[2], scale, h))
                for (auto [iw, ww] : linear_taps(in[3], scale, w)) want += wh * ww * plane[ih * in[3] + iw];
              ASSERT_NEAR(r.outputs[0][i], want, 1e-5) << scale << " threads " << threads << " at " << i;
            }
      }
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
