// The unary math table, Pow, the variadic Min, Max and Mean, Gelu and
// LayerNormalization against formulas written here (libm in double, loops over the
// broadcast definition); their FLOPs against docs/cost-model.md's counts.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

struct MathCase {
  const char* op;
  std::function<double(double)> f;
  int64_t flops_per_element;
  float lo, hi;  // the function's domain, sampled
};

void PrintTo(const MathCase& c, std::ostream* os) {
  *os << c.op;
}

class UnaryMathTest : public ::testing::TestWithParam<MathCase> {};

TEST_P(UnaryMathTest, MatchesLibm) {
  const MathCase& c = GetParam();
  auto x = random_values(3 * 50, 41, c.lo, c.hi);  // more than a few vectors, and a tail
  x[0] = 0.5f;
  x[1] = -0.5f;  // halves: Round goes to even
  x[2] = 2.5f;
  for (float& v : x) v = std::clamp(v, c.lo, c.hi);
  OpResult r = run_op(c.op, {input({3, 50}, x)});
  ASSERT_EQ(r.shapes[0], (Shape{3, 50}));
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = c.f(x[i]);
    EXPECT_NEAR(r.outputs[0][i], want, 2e-6 * (1 + std::fabs(want))) << c.op << " at " << x[i];
  }
  EXPECT_EQ(r.cost.flops, c.flops_per_element * 150);
  EXPECT_EQ(r.cost.bytes_read, 4 * 150);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, UnaryMathTest,
    ::testing::Values(MathCase{"Abs", [](double x) { return std::fabs(x); }, 1, -5, 5},
                      MathCase{"Neg", [](double x) { return -x; }, 1, -5, 5},
                      MathCase{"Sign", [](double x) { return x > 0   ? 1.0
                                                             : x < 0 ? -1.0
                                                                     : 0.0; }, 1, -5, 5},
                      MathCase{"Sqrt", [](double x) { return std::sqrt(x); }, 1, 0, 100},
                      MathCase{"Reciprocal", [](double x) { return 1 / x; }, 1, 0.1f, 10},
                      MathCase{"Exp", [](double x) { return std::exp(x); }, 1, -20, 20},
                      MathCase{"Log", [](double x) { return std::log(x); }, 1, 0.01f, 100},
                      MathCase{"Floor", [](double x) { return std::floor(x); }, 1, -5, 5},
                      MathCase{"Ceil", [](double x) { return std::ceil(x); }, 1, -5, 5},
                      MathCase{"Round", [](double x) { return std::nearbyint(x); }, 1, -5, 5},
                      MathCase{"Erf", [](double x) { return std::erf(x); }, 1, -5, 5},
                      MathCase{"Sin", [](double x) { return std::sin(x); }, 1, -5, 5},
                      MathCase{"Cos", [](double x) { return std::cos(x); }, 1, -5, 5},
                      MathCase{"Tan", [](double x) { return std::tan(x); }, 1, -1.5f, 1.5f},
                      MathCase{"Asin", [](double x) { return std::asin(x); }, 1, -1, 1},
                      MathCase{"Acos", [](double x) { return std::acos(x); }, 1, -1, 1},
                      MathCase{"Atan", [](double x) { return std::atan(x); }, 1, -5, 5},
                      MathCase{"Sinh", [](double x) { return std::sinh(x); }, 1, -5, 5},
                      MathCase{"Cosh", [](double x) { return std::cosh(x); }, 1, -5, 5},
                      MathCase{"Asinh", [](double x) { return std::asinh(x); }, 1, -5, 5},
                      MathCase{"Acosh", [](double x) { return std::acosh(x); }, 1, 1, 5},
                      MathCase{"Atanh", [](double x) { return std::atanh(x); }, 1, -0.9f, 0.9f},
                      MathCase{"Softsign", [](double x) { return x / (1 + std::fabs(x)); }, 3, -5, 5},
                      MathCase{"Gelu", [](double x) { return x / 2 * (1 + std::erf(x / std::sqrt(2.0))); }, 5, -6, 6}),
    [](const auto& info) { return std::string(info.param.op); });

// The vector Erf at the edges: saturation to +-1, NaN and infinities.
TEST(Erf, EdgeValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.0f,  -0.0f,  1e-8f, 3.9f, -3.9f,
                                10.0f, -10.0f, inf,   -inf, std::numeric_limits<float>::quiet_NaN()};
  OpResult r = run_op("Erf", {input({static_cast<int64_t>(x.size())}, x)});
  for (size_t i = 0; i + 1 < x.size(); ++i) EXPECT_NEAR(r.outputs[0][i], std::erf(x[i]), 1e-7) << x[i];
  EXPECT_TRUE(std::isnan(r.outputs[0].back()));
}

// y[i] = pow(a[...], b[...]) by the broadcast definition; the square is exact.
TEST(Pow, BroadcastsLikeNumpy) {
  const auto a = random_values(2 * 3 * 4, 42, 0.1f, 3.0f), b = random_values(4, 43, -2.0f, 2.0f);
  OpResult r = run_op("Pow", {input({2, 3, 4}, a), input({4}, b)});
  ASSERT_EQ(r.shapes[0], (Shape{2, 3, 4}));
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(r.outputs[0][i], std::pow(double(a[i]), double(b[i % 4])), 1e-5);
  EXPECT_EQ(r.cost.flops, 24);
  OpResult square = run_op("Pow", {input({2, 3, 4}, a), weight({}, {2.0f})});
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(square.outputs[0][i], a[i] * a[i]);
  EXPECT_EQ(square.cost.params, 1);
}

// Min, Max and Mean of three inputs of different shapes, by the broadcast definition.
TEST(Variadic, MinMaxMeanBroadcast) {
  const auto a = random_values(24, 44), b = random_values(3, 45), c = random_values(4, 46);
  struct Case {
    const char* op;
    std::function<double(double, double, double)> f;
    int64_t flops_per_element;
  };
  const Case cases[] = {
      {"Min",
       [](double p, double q, double s) {
         return std::min({p, q, s});
       },
       2},
      {"Max",
       [](double p, double q, double s) {
         return std::max({p, q, s});
       },
       2},
      {"Mean", [](double p, double q, double s) { return (p + q + s) / 3; }, 3},
      {"Sum", [](double p, double q, double s) { return p + q + s; }, 2},
  };
  for (const Case& k : cases) {
    OpResult r = run_op(k.op, {input({2, 3, 4}, a), input({3, 1}, b), input({4}, c)});
    ASSERT_EQ(r.shapes[0], (Shape{2, 3, 4})) << k.op;
    for (int64_t i = 0; i < 24; ++i)
      EXPECT_NEAR(r.outputs[0][i], k.f(a[i], b[(i / 4) % 3], c[i % 4]), 1e-6) << k.op << " " << i;
    EXPECT_EQ(r.cost.flops, k.flops_per_element * 24) << k.op;
  }
  // A NaN wins, as numpy's maximum and minimum.
  std::vector<float> n = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  for (const char* op : {"Min", "Max"}) {
    OpResult r = run_op(op, {input({2}, {0.0f, 0.0f}), input({2}, n)});
    EXPECT_TRUE(std::isnan(r.outputs[0][1])) << op;
  }
}

// y = (x - mean) / sqrt(var + eps) * scale + bias over the dims from axis on.
std::vector<double> layer_norm(const std::vector<float>& x, int64_t rows, int64_t size, const std::vector<float>& scale,
                               const std::vector<float>& bias, double eps) {
  std::vector<double> y;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < size; ++i) mean += x[r * size + i] / double(size);
    for (int64_t i = 0; i < size; ++i) var += (x[r * size + i] - mean) * (x[r * size + i] - mean) / double(size);
    for (int64_t i = 0; i < size; ++i)
      y.push_back((x[r * size + i] - mean) / std::sqrt(var + eps) * scale[i] + (bias.empty() ? 0.0 : bias[i]));
  }
  return y;
}

TEST(LayerNormalization, MatchesFormula) {
  const auto x = random_values(2 * 3 * 4, 47, -3.0f, 3.0f);
  const auto scale = random_values(12, 48, 0.5f, 1.5f), bias = random_values(12, 49);
  Attributes a;
  a.set("axis", int64_t(1));
  a.set("epsilon", 1e-3);
  OpResult r = run_op("LayerNormalization", {input({2, 3, 4}, x), weight({3, 4}, scale), weight({3, 4}, bias)}, a);
  const auto want = layer_norm(x, 2, 12, scale, bias, 1e-3);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(r.outputs[0][i], want[i], 1e-5) << i;
  // 7 per element and 2 per row (docs/cost-model.md); scale and bias are parameters.
  EXPECT_EQ(r.cost.flops, 7 * 24 + 2 * 2);
  EXPECT_EQ(r.cost.params, 24);
  // Without bias, over the last axis (the default): 6 per element.
  const std::vector<float> s4(scale.begin(), scale.begin() + 4);
  OpResult nb = run_op("LayerNormalization", {input({2, 3, 4}, x), weight({4}, s4)});
  const auto want_nb = layer_norm(x, 6, 4, s4, {}, 1e-5);
  for (size_t i = 0; i < want_nb.size(); ++i) EXPECT_NEAR(nb.outputs[0][i], want_nb[i], 1e-5) << i;
  EXPECT_EQ(nb.cost.flops, 6 * 24 + 2 * 6);
  EXPECT_NE(compile_error("LayerNormalization", {input({2, 3, 4}, x), weight({3}, {1, 1, 1})}).find("normalised shape"),
            std::string::npos);
}

}  // namespace
}  // namespace minfer::test
