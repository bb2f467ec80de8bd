// The vector set's Exp and Softmax rows on every target under test against their
// definitions in double precision, at lengths around the vector widths (the tail runs
// through a padded vector), and the Softmax op's rows split among threads.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/kernels/vector_activations.h"
#include "tests/isa_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

using kernels::VectorActivations;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<const VectorActivations*> sets_under_test() {
  std::vector<const VectorActivations*> sets;
  for (Isa isa : isas_under_test()) sets.push_back(kernels::vector_activations_for(isa));
  return sets;
}

TEST(VectorExp, MatchesTheDefinitionOverTheFloatRange) {
  std::vector<float> x = random_values(300, 5, -87.0f, 88.0f);
  for (float v : {0.0f, -0.0f, 1e-30f, 0.5f, 1.0f, 10.0f, 88.7f, -87.3f, -100.0f, -103.0f})
    for (float sign : {1.0f, -1.0f}) x.push_back(sign * v);
  for (const VectorActivations* v : sets_under_test()) {
    SCOPED_TRACE(v->name);
    std::vector<float> y = x;
    v->exp(y.data(), static_cast<int64_t>(y.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::exp(double(x[i]));
      if (want > std::numeric_limits<float>::max())
        EXPECT_EQ(y[i], kInf) << x[i];
      else  // relative 2e-6, or absolute where the result is subnormal
        EXPECT_LE(std::fabs(y[i] - want), std::max(2e-6 * want, 1e-44)) << "exp(" << x[i] << ")";
    }
    std::vector<float> special = {kInf, -kInf, std::numeric_limits<float>::quiet_NaN()};
    v->exp(special.data(), 3);
    EXPECT_EQ(special[0], kInf);
    EXPECT_EQ(special[1], 0.0f);
    EXPECT_TRUE(std::isnan(special[2]));
  }
}

// softmax and log-softmax of x in double.
void reference(const std::vector<float>& x, std::vector<double>& soft, std::vector<double>& log_soft) {
  double max = -INFINITY, sum = 0;
  for (float v : x) max = std::max(max, double(v));
  for (float v : x) sum += std::exp(v - max);
  soft.clear();
  log_soft.clear();
  for (float v : x) {
    soft.push_back(std::exp(v - max) / sum);
    log_soft.push_back(v - max - std::log(sum));
  }
}

TEST(VectorSoftmax, RowsOfEveryLengthMatchTheDefinition) {
  for (const VectorActivations* v : sets_under_test())
    for (int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 40, 1000}) {
      SCOPED_TRACE(testing::Message() << v->name << " n=" << n);
      const std::vector<float> x = random_values(n, static_cast<uint32_t>(n), -30.0f, 30.0f);
      std::vector<double> soft, log_soft;
      reference(x, soft, log_soft);
      std::vector<float> y(n + 1, 7.0f), l(n + 1, 7.0f);  // one guard element past the row
      v->softmax(x.data(), y.data(), n, false);
      v->softmax(x.data(), l.data(), n, true);
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_LE(std::fabs(y[i] - soft[i]), 4e-6 * soft[i] + 1e-37) << i;
        EXPECT_LE(std::fabs(l[i] - log_soft[i]), 4e-6 * (1 + std::fabs(log_soft[i]))) << i;
      }
      EXPECT_EQ(y[n], 7.0f);
      EXPECT_EQ(l[n], 7.0f);
      std::vector<float> in_place = x;  // y may be x
      v->softmax(in_place.data(), in_place.data(), n, false);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(in_place[i], y[i]) << i;
    }
}

TEST(VectorSoftmax, InfinitiesAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const VectorActivations* v : sets_under_test()) {
    SCOPED_TRACE(v->name);
    // -inf entries get 0 (log: -inf); the others share the sum, in the tail or not.
    for (int64_t n : {3, 19}) {
      std::vector<float> x(n, 1.0f), y(n), l(n);
      x[0] = -kInf;
      x[n - 1] = -kInf;
      v->softmax(x.data(), y.data(), n, false);
      v->softmax(x.data(), l.data(), n, true);
      EXPECT_EQ(y[0], 0.0f);
      EXPECT_EQ(l[n - 1], -kInf);
      EXPECT_NEAR(y[1], 1.0 / double(n - 2), 1e-6);
    }
    // A NaN or a +inf anywhere makes the whole row NaN, as the formula does.
    for (float bad : {nan, kInf})
      for (int64_t at : {0, 5, 18}) {
        std::vector<float> x(19, 0.5f), y(19), l(19);
        x[at] = bad;
        v->softmax(x.data(), y.data(), 19, false);
        v->softmax(x.data(), l.data(), 19, true);
        for (int64_t i = 0; i < 19; ++i) {
          EXPECT_TRUE(std::isnan(y[i])) << bad << " at " << at << ", element " << i;
          EXPECT_TRUE(std::isnan(l[i])) << bad << " at " << at << ", element " << i;
        }
      }
  }
}

// A middle axis (each softmax a strided column) over many rows: two threads give the
// bits one does, and both the definition.
TEST(SoftmaxOp, ColumnsSplitAmongThreadsMatchOneThread) {
  const Shape shape = {4, 37, 300};
  const std::vector<float> x = random_values(num_elements(shape), 41, -8.0f, 8.0f);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    Attributes a;
    a.set("axis", int64_t{1});
    const OpResult one = run_op(op, {input(shape, x)}, a, 1, 1);
    const OpResult two = run_op(op, {input(shape, x)}, a, 1, 2);
    ASSERT_EQ(one.outputs[0], two.outputs[0]) << op;
    for (int64_t o = 0; o < 4; ++o)
      for (int64_t i = 0; i < 300; i += 37) {
        std::vector<float> column;
        for (int64_t j = 0; j < 37; ++j) column.push_back(x[(o * 37 + j) * 300 + i]);
        std::vector<double> soft, log_soft;
        reference(column, soft, log_soft);
        for (int64_t j = 0; j < 37; ++j) {
          const double want = std::string(op) == "Softmax" ? soft[j] : log_soft[j];
          EXPECT_NEAR(one.outputs[0][(o * 37 + j) * 300 + i], want, 4e-6 * (1 + std::fabs(want))) << op;
        }
      }
  }
}

}  // namespace
}  // namespace minfer::test
