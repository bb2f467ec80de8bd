// Activations, BatchNormalization, broadcasting binaries and softmax against formulas
// written here; their FLOPs per element against the cost table.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

struct UnaryCase {
  const char* op;
  std::function<double(double)> f;
  int64_t flops_per_element;
  std::vector<std::pair<const char*, double>> attrs;
};

void PrintTo(const UnaryCase& u, std::ostream* os) {
  *os << u.op;
}

class UnaryTest : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryTest, MatchesFormula) {
  const UnaryCase& u = GetParam();
  auto x = random_values(3 * 4 * 5, 21, -8.0f, 8.0f);
  x[0] = 0.0f;
  x[1] = 25.0f;  // large inputs: Softplus and Sigmoid must not overflow
  x[2] = -25.0f;
  Attributes a;
  for (const auto& [name, value] : u.attrs) a.set(name, value);
  OpResult r = run_op(u.op, {input({3, 4, 5}, x)}, a);
  ASSERT_EQ(r.shapes[0], (Shape{3, 4, 5}));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(r.outputs[0][i], u.f(x[i]), 1e-5 * (1 + std::fabs(u.f(x[i])))) << i;
  EXPECT_EQ(r.cost.flops, u.flops_per_element * 60);
  EXPECT_EQ(r.cost.bytes_read, 4 * 60);
  EXPECT_EQ(r.cost.bytes_written, 4 * 60);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, UnaryTest,
    ::testing::Values(
        UnaryCase{"Relu", [](double x) { return x > 0 ? x : 0; }, 1, {}},
        UnaryCase{"Clip", [](double x) { return std::min(6.0, std::max(0.0, x)); }, 2, {{"min", 0.0}, {"max", 6.0}}},
        UnaryCase{"LeakyRelu", [](double x) { return x < 0 ? 0.1 * x : x; }, 2, {{"alpha", 0.1}}},
        UnaryCase{"Elu", [](double x) { return x < 0 ? 0.7 * (std::exp(x) - 1) : x; }, 4, {{"alpha", 0.7}}},
        UnaryCase{"Selu",
                  [](double x) { return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * (std::exp(x) - 1)); },
                  5,
                  {}},
        UnaryCase{"Sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, 4, {}},
        UnaryCase{"HardSigmoid", [](double x) { return std::max(0.0, std::min(1.0, 0.2 * x + 0.5)); }, 4, {}},
        UnaryCase{"HardSwish", [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); }, 5, {}},
        UnaryCase{"Tanh", [](double x) { return std::tanh(x); }, 5, {}},
        UnaryCase{"Softplus", [](double x) { return std::log(1 + std::exp(x)); }, 3, {}},
        UnaryCase{"Swish", [](double x) { return x / (1 + std::exp(-0.5 * x)); }, 4, {{"alpha", 0.5}}},
        UnaryCase{"Celu",
                  [](double x) { return std::max(0.0, x) + std::min(0.0, 1.5 * (std::exp(x / 1.5) - 1)); },
                  5,
                  {{"alpha", 1.5}}},
        UnaryCase{"ThresholdedRelu", [](double x) { return x > 0.75 ? x : 0; }, 1, {{"alpha", 0.75}}},
        UnaryCase{"Mish", [](double x) { return x * std::tanh(std::log(1 + std::exp(x))); }, 9, {}},
        UnaryCase{"Shrink",
                  [](double x) { return x < -2  ? x + 0.5
                                        : x > 2 ? x - 0.5
                                                : 0; },
                  2,
                  {{"lambd", 2.0}, {"bias", 0.5}}}),
    [](const auto& info) { return std::string(info.param.op); });

TEST(Clip, BoundsAsInputs) {
  auto x = random_values(10, 22, -3, 3);
  OpResult r = run_op("Clip", {input({10}, x), weight({}, {-1.0f}), weight({}, {0.5f})});
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(r.outputs[0][i], std::min(0.5f, std::max(-1.0f, x[i])));
  OpResult only_min = run_op("Clip", {input({10}, x), weight({}, {0.0f})});
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(only_min.outputs[0][i], std::max(0.0f, x[i]));
}

TEST(BatchNormalization, PerChannelAffine) {
  auto x = random_values(2 * 3 * 4, 23);
  std::vector<float> scale = {0.5f, 1.0f, 2.0f}, bias = {0.1f, -0.2f, 0.3f}, mean = {0.0f, 0.5f, -0.5f},
                     var = {1.0f, 0.25f, 4.0f};
  Attributes a;
  a.set("epsilon", 1e-3);
  OpResult r =
      run_op("BatchNormalization",
             {input({2, 3, 4}, x), weight({3}, scale), weight({3}, bias), weight({3}, mean), weight({3}, var)}, a);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t i = 0; i < 4; ++i) {
        const int64_t k = (n * 3 + c) * 4 + i;
        const double want = (x[k] - mean[c]) / std::sqrt(var[c] + 1e-3) * scale[c] + bias[c];
        EXPECT_NEAR(r.outputs[0][k], want, 1e-5);
      }
  EXPECT_EQ(r.cost.flops, 2 * 24);
  EXPECT_EQ(r.cost.params, 12);
}

// DenseNet's norm1 -> relu1 (after a Concat, nothing to fold into): the Relu fused into
// the BatchNormalization gives the unfused pair's values bit for bit, over planes longer
// than the stretch it applies the activation to at a time, on 1 and 2 threads; its FLOPs
// and the report name it.
TEST(BatchNormalization, FusedReluMatchesTheUnfusedPair) {
  const Shape shape = {2, 3, 50, 50};
  const std::vector<float> x = random_values(num_elements(shape), 29);
  const std::vector<TestTensor> in = {input(shape, x), weight({3}, {0.5f, -1.0f, 2.0f}),
                                      weight({3}, {0.1f, -0.2f, 0.3f}), weight({3}, {0.0f, 0.5f, -0.5f}),
                                      weight({3}, {1.0f, 0.25f, 4.0f})};
  std::vector<float> want = run_op("BatchNormalization", in).outputs[0];
  for (float& v : want) v = std::max(v, 0.0f);
  Activation relu;
  relu.kind = ActivationKind::kRelu;
  const Attributes fused = fused_activation_attributes(relu);
  for (int threads : {1, 2}) {
    const OpResult r = run_op("BatchNormalization", in, fused, 1, threads);
    EXPECT_EQ(r.outputs[0], want) << "threads " << threads;
    EXPECT_EQ(r.cost.flops, (2 + relu.flops_per_element()) * num_elements(shape));
    EXPECT_EQ(r.details["fused_activation"], "Relu");
  }
}

struct BinaryCase {
  const char* op;
  std::function<double(double, double)> f;
  Shape a, b, out;
};

void PrintTo(const BinaryCase& c, std::ostream* os) {
  *os << c.op << "_" << shape_str(c.a) << "_" << shape_str(c.b);
}

class BinaryTest : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(BinaryTest, BroadcastsLikeNumpy) {
  const BinaryCase& c = GetParam();
  auto a = random_values(num_elements(c.a), 24, 0.5f, 2.0f), b = random_values(num_elements(c.b), 25, 0.5f, 2.0f);
  OpResult r = run_op(c.op, {input(c.a, a), input(c.b, b)});
  ASSERT_EQ(r.shapes[0], c.out);
  // Index by definition: each output coordinate, right-aligned, clamped to 0 on broadcast dims.
  const size_t rank = c.out.size();
  auto source = [&](const Shape& s, const std::vector<int64_t>& coord) {
    int64_t idx = 0;
    for (size_t d = 0; d < s.size(); ++d) idx = idx * s[d] + (s[d] == 1 ? 0 : coord[rank - s.size() + d]);
    return idx;
  };
  std::vector<int64_t> coord(rank, 0);
  for (int64_t i = 0; i < num_elements(c.out); ++i) {
    int64_t rem = i;
    for (size_t d = rank; d-- > 0;) {
      coord[d] = rem % c.out[d];
      rem /= c.out[d];
    }
    EXPECT_NEAR(r.outputs[0][i], c.f(a[source(c.a, coord)], b[source(c.b, coord)]), 1e-6) << i;
  }
  EXPECT_EQ(r.cost.flops, (std::string(c.op) == "PRelu" ? 2 : 1) * num_elements(c.out));
}

INSTANTIATE_TEST_SUITE_P(
    Ops, BinaryTest,
    ::testing::Values(
        BinaryCase{"Add", std::plus<double>(), {2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
        BinaryCase{"Add", std::plus<double>(), {2, 3, 4}, {4}, {2, 3, 4}},
        BinaryCase{"Sub", std::minus<double>(), {2, 1, 4}, {3, 1}, {2, 3, 4}},
        BinaryCase{"Mul", std::multiplies<double>(), {1, 3, 1, 1}, {2, 3, 5, 5}, {2, 3, 5, 5}},
        // The squeeze-excitation gate: per channel of each image, rows of H*W.
        BinaryCase{"Mul", std::multiplies<double>(), {2, 3, 5, 7}, {2, 3, 1, 1}, {2, 3, 5, 7}},
        BinaryCase{"Add", std::plus<double>(), {2, 3, 1, 7}, {2, 3, 1, 1}, {2, 3, 1, 7}},
        BinaryCase{"Sub", std::minus<double>(), {2, 1, 3, 4}, {2, 5, 3, 4}, {2, 5, 3, 4}},
        BinaryCase{"Mul", std::multiplies<double>(), {3, 1, 5}, {1, 4, 1}, {3, 4, 5}},
        BinaryCase{"Add", std::plus<double>(), {1}, {2, 3, 4}, {2, 3, 4}},
        BinaryCase{"Add", std::plus<double>(), {2, 1, 1}, {1, 1, 1}, {2, 1, 1}},
        BinaryCase{"Div", std::divides<double>(), {5, 1}, {1, 5}, {5, 5}},
        BinaryCase{"Div", std::divides<double>(), {}, {2, 2}, {2, 2}},
        BinaryCase{"PRelu", [](double x, double s) { return x < 0 ? s * x : x; }, {2, 3, 4}, {3, 1}, {2, 3, 4}}));

TEST(Sum, ThreeInputsWithBroadcast) {
  auto a = random_values(6, 26), b = random_values(3, 27), c = random_values(1, 28);
  OpResult r = run_op("Sum", {input({2, 3}, a), input({3}, b), input({1}, c)});
  for (int64_t i = 0; i < 6; ++i) EXPECT_NEAR(r.outputs[0][i], a[i] + b[i % 3] + c[0], 1e-6);
  EXPECT_EQ(r.cost.flops, 2 * 6);
}

TEST(Softmax, AlongEachAxisSumsToOne) {
  auto x = random_values(2 * 3 * 4, 29, -5, 5);
  for (int64_t axis : {-1, 0, 1}) {
    Attributes a;
    a.set("axis", axis);
    OpResult s = run_op("Softmax", {input({2, 3, 4}, x)}, a);
    OpResult l = run_op("LogSoftmax", {input({2, 3, 4}, x)}, a);
    const int64_t ax = axis < 0 ? 2 : axis;
    const Shape dims = {2, 3, 4};
    const int64_t stride = ax == 0 ? 12 : ax == 1 ? 4 : 1;
    for (int64_t i = 0; i < 24; ++i) {
      // Reference: softmax over the elements that share i's coordinates off the axis.
      const int64_t coord = (i / stride) % dims[ax];
      const int64_t base = i - coord * stride;
      double denom = 0;
      for (int64_t j = 0; j < dims[ax]; ++j) denom += std::exp(double(x[base + j * stride]));
      EXPECT_NEAR(s.outputs[0][i], std::exp(double(x[i])) / denom, 1e-6);
      EXPECT_NEAR(l.outputs[0][i], double(x[i]) - std::log(denom), 1e-5);
    }
    EXPECT_EQ(s.cost.flops, 5 * 24);
  }
}

}  // namespace
}  // namespace minfer::test
