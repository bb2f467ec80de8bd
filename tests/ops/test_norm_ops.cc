// InstanceNormalization and LRN through the engine (inference, cost, kernel) against
// loops written here from the ONNX definitions, in double; their costs against
// docs/cost-model.md's counts; the inputs and attributes they refuse.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

std::vector<double> naive_instance_norm(const std::vector<float>& x, const Shape& shape,
                                        const std::vector<float>& scale, const std::vector<float>& bias, double eps) {
  const int64_t planes = shape[0] * shape[1], n = num_elements(shape) / planes;
  std::vector<double> y(x.size());
  for (int64_t p = 0; p < planes; ++p) {
    const auto* v = x.data() + p * n;
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < n; ++i) mean += v[i];
    mean /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) var += (v[i] - mean) * (v[i] - mean);
    var /= static_cast<double>(n);
    const int64_t c = p % shape[1];
    for (int64_t i = 0; i < n; ++i)
      y[static_cast<size_t>(p * n + i)] = (v[i] - mean) / std::sqrt(var + eps) * scale[c] + bias[c];
  }
  return y;
}

std::vector<double> naive_lrn(const std::vector<float>& x, const Shape& shape, int64_t size, double alpha, double beta,
                              double bias) {
  const int64_t batch = shape[0], channels = shape[1], plane = num_elements(shape) / (batch * channels);
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < plane; ++p) {
        // ONNX: [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)], clipped.
        const int64_t lo = std::max<int64_t>(0, c - static_cast<int64_t>(std::floor((size - 1) / 2.0)));
        const int64_t hi = std::min(channels - 1, c + static_cast<int64_t>(std::ceil((size - 1) / 2.0)));
        double sum = 0.0;
        for (int64_t i = lo; i <= hi; ++i) sum += std::pow(x[static_cast<size_t>((b * channels + i) * plane + p)], 2);
        const size_t at = static_cast<size_t>((b * channels + c) * plane + p);
        y[at] = x[at] / std::pow(bias + alpha / static_cast<double>(size) * sum, beta);
      }
  return y;
}

void expect_close(const std::vector<float>& y, const std::vector<double>& want) {
  ASSERT_EQ(y.size(), want.size());
  int reported = 0;
  for (size_t i = 0; i < y.size(); ++i)
    if (!(std::fabs(y[i] - want[i]) <= 2e-6 * (1.0 + std::fabs(want[i]))) && reported++ < 5)
      ADD_FAILURE() << "element " << i << ": " << y[i] << ", want " << want[i];
}

// Ranks 3 to 5, several epsilons, one and two threads; 7 FLOPs per element and 2 per
// (n, c) plane, scale and B as parameters.
TEST(InstanceNormalization, MatchesFormula) {
  const Shape shapes[] = {{2, 3, 5}, {1, 4, 6, 7}, {2, 2, 3, 4, 5}, {1, 3, 37, 41}, {3, 2, 1}};
  uint32_t seed = 100;
  for (const Shape& shape : shapes)
    for (double eps : {1e-5, 1e-3, 0.3})
      for (int threads : {1, 2}) {
        SCOPED_TRACE(testing::Message() << shape_str(shape) << " eps=" << eps << " threads=" << threads);
        const int64_t e = num_elements(shape), c = shape[1];
        const auto x = random_values(e, ++seed, -2.0f, 3.0f);
        const auto scale = random_values(c, ++seed, 0.5f, 1.5f), bias = random_values(c, ++seed);
        Attributes a;
        a.set("epsilon", eps);
        const OpResult r =
            run_op("InstanceNormalization", {input(shape, x), weight({c}, scale), weight({c}, bias)}, a, 1, threads);
        ASSERT_EQ(r.shapes[0], shape);
        expect_close(r.outputs[0], naive_instance_norm(x, shape, scale, bias, static_cast<float>(eps)));
        EXPECT_EQ(r.cost.macs, 0);
        EXPECT_EQ(r.cost.flops, 7 * e + 2 * shape[0] * c);
        EXPECT_EQ(r.cost.params, 2 * c);
        EXPECT_EQ(r.cost.bytes_read, 4 * (e + 2 * c));
        EXPECT_EQ(r.cost.bytes_written, 4 * e);
      }
}

// The default epsilon is ONNX's 1e-5: visible on planes whose variance is of its order.
TEST(InstanceNormalization, DefaultEpsilon) {
  const Shape shape{1, 2, 50};
  auto x = random_values(100, 7, -5e-3f, 5e-3f);
  const std::vector<float> scale{1.0f, 2.0f}, bias{0.0f, 0.5f};
  const OpResult r = run_op("InstanceNormalization", {input(shape, x), weight({2}, scale), weight({2}, bias)});
  expect_close(r.outputs[0], naive_instance_norm(x, shape, scale, bias, static_cast<float>(1e-5)));
}

std::string int64_x_error(const std::string& op, const std::vector<TestTensor>& rest, Attributes attrs) {
  std::vector<TestTensor> inputs{weight({1, 2, 3}, std::vector<float>(6, 1.0f))};
  inputs.insert(inputs.end(), rest.begin(), rest.end());
  Graph g = single_op_graph(op, inputs, std::move(attrs));
  g.initializers["in0"] = Tensor({1, 2, 3}, std::vector<int64_t>(6, 1));
  try {
    compile(g);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(InstanceNormalization, RefusesBadInputs) {
  const auto x = random_values(24, 3);
  const std::vector<float> two{1.0f, 1.0f};
  auto refused = [](const std::string& message, const char* cause) {
    EXPECT_NE(message.find(cause), std::string::npos) << message;
  };
  refused(compile_error("InstanceNormalization", {input({2, 12}, x), weight({12}, std::vector<float>(12, 1.0f)),
                                                  weight({12}, std::vector<float>(12, 0.0f))}),
          "rank 3 or more");
  refused(compile_error("InstanceNormalization",
                        {input({2, 3, 4}, x), weight({2}, two), weight({3}, std::vector<float>(3, 0.0f))}),
          "scale has shape 2, expected 3: one value per channel of X 2x3x4");
  refused(compile_error("InstanceNormalization",
                        {input({2, 3, 4}, x), weight({3}, std::vector<float>(3, 1.0f)), weight({1, 3}, {0, 0, 0})}),
          "B has shape 1x3, expected 3");
  refused(compile_error("InstanceNormalization", {input({2, 3, 4}, x), weight({3}, std::vector<float>(3, 1.0f))}),
          "expects 3 inputs");
  Attributes momentum;
  momentum.set("momentum", 0.9);
  refused(
      compile_error("InstanceNormalization",
                    {input({2, 3, 4}, x), weight({3}, std::vector<float>(3, 1.0f)), weight({3}, {0, 0, 0})}, momentum),
      "momentum");
  refused(int64_x_error("InstanceNormalization", {weight({2}, two), weight({2}, two)}, {}),
          "X is int64, expected float32");
}

struct LrnCase {
  Shape shape;
  int64_t size;
  double alpha, beta, bias;
};

// Ranks 3 to 5, odd and even windows (and one wider than the channels), the powers the
// kernel special-cases and a general one; alpha large enough that the window's sum, not
// the bias, sets the result; one and two threads. FLOPs: size + 5 per element.
TEST(Lrn, MatchesFormula) {
  const LrnCase cases[] = {{{2, 7, 9}, 3, 1.5, 0.75, 1.0},       {{1, 6, 9, 11}, 2, 2.0, 0.75, 1.0},
                           {{1, 6, 9, 11}, 5, 1e-4, 0.75, 2.0},  {{2, 3, 4, 2, 3}, 4, 1.0, 0.5, 0.5},
                           {{1, 16, 40, 40}, 5, 3.0, 0.75, 2.0}, {{1, 5, 7, 7}, 8, 1.0, 1.0, 1.0},
                           {{2, 6, 13}, 1, 0.8, 0.6, 1.5},       {{1, 9, 33}, 7, 2.5, 1.3, 0.25}};
  uint32_t seed = 200;
  for (const LrnCase& c : cases)
    for (int threads : {1, 2}) {
      SCOPED_TRACE(testing::Message() << shape_str(c.shape) << " size=" << c.size << " beta=" << c.beta
                                      << " threads=" << threads);
      const int64_t e = num_elements(c.shape);
      const auto x = random_values(e, ++seed, -3.0f, 3.0f);
      Attributes a;
      a.set("size", c.size);
      a.set("alpha", c.alpha);
      a.set("beta", c.beta);
      a.set("bias", c.bias);
      const OpResult r = run_op("LRN", {input(c.shape, x)}, a, 1, threads);
      ASSERT_EQ(r.shapes[0], c.shape);
      expect_close(r.outputs[0], naive_lrn(x, c.shape, c.size, c.alpha, c.beta, c.bias));
      EXPECT_EQ(r.cost.macs, 0);
      EXPECT_EQ(r.cost.flops, (c.size + 5) * e);
      EXPECT_EQ(r.cost.params, 0);
      EXPECT_EQ(r.cost.bytes_read, 4 * e);
      EXPECT_EQ(r.cost.bytes_written, 4 * e);
    }
}

// Given only its size, LRN takes ONNX's alpha 1e-4, beta 0.75 and bias 1: inputs large
// enough that alpha shows.
TEST(Lrn, DefaultAttributesAreOnnxs) {
  const Shape shape{1, 6, 20};
  const auto x = random_values(120, 9, -60.0f, 60.0f);
  Attributes a;
  a.set("size", int64_t{3});
  const OpResult r = run_op("LRN", {input(shape, x)}, a);
  expect_close(r.outputs[0], naive_lrn(x, shape, 3, 1e-4, 0.75, 1.0));
}

TEST(Lrn, RefusesBadInputs) {
  const auto x = random_values(24, 3);
  auto refused = [](const std::string& message, const char* cause) {
    EXPECT_NE(message.find(cause), std::string::npos) << message;
  };
  refused(compile_error("LRN", {input({2, 3, 4}, x)}), "attribute 'size' is required");
  Attributes size0;
  size0.set("size", int64_t{0});
  refused(compile_error("LRN", {input({2, 3, 4}, x)}, size0), "size must be at least 1, got 0");
  Attributes size3;
  size3.set("size", int64_t{3});
  refused(compile_error("LRN", {input({2, 12}, x)}, size3), "rank 3 or more");
  refused(compile_error("LRN", {input({2, 3, 4}, x), input({2, 3, 4}, x)}, size3), "expects 1 inputs");
  refused(int64_x_error("LRN", {}, size3), "X is int64, expected float32");
  Attributes unknown = size3;
  unknown.set("axis", int64_t{1});
  refused(compile_error("LRN", {input({2, 3, 4}, x)}, unknown), "axis");
}

}  // namespace
}  // namespace minfer::test
