// The Reduce family against a naive loop written here (every output element reduced
// from the input elements that map onto it, in double), over contiguous, split, all and
// no axes with and without keepdims; costs against the counts of docs/cost-model.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

struct ReduceCase {
  const char* op;
  // The result over the values of one output element.
  std::function<double(const std::vector<double>&)> f;
  int64_t flops_per_input, flops_per_output;
  float lo = -2.0f, hi = 2.0f;
};

void PrintTo(const ReduceCase& c, std::ostream* os) {
  *os << c.op;
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

std::vector<ReduceCase> cases() {
  return {
      {"ReduceSum", sum, 1, 0},
      {"ReduceMean", [](const auto& v) { return sum(v) / double(v.size()); }, 1, 0},
      {"ReduceMax", [](const auto& v) { return *std::max_element(v.begin(), v.end()); }, 1, 0},
      {"ReduceMin", [](const auto& v) { return *std::min_element(v.begin(), v.end()); }, 1, 0},
      {"ReduceProd",
       [](const auto& v) {
         double p = 1;
         for (double x : v) p *= x;
         return p;
       },
       1, 0, 0.5f, 1.5f},
      {"ReduceSumSquare",
       [](const auto& v) {
         double s = 0;
         for (double x : v) s += x * x;
         return s;
       },
       2, 0},
      {"ReduceL1",
       [](const auto& v) {
         double s = 0;
         for (double x : v) s += std::fabs(x);
         return s;
       },
       2, 0},
      {"ReduceL2",
       [](const auto& v) {
         double s = 0;
         for (double x : v) s += x * x;
         return std::sqrt(s);
       },
       2, 1},
      {"ReduceLogSum", [](const auto& v) { return std::log(sum(v)); }, 1, 1, 0.1f, 2.0f},
      {"ReduceLogSumExp",
       [](const auto& v) {
         double s = 0;
         for (double x : v) s += std::exp(x);
         return std::log(s);
       },
       4, 2, -30.0f, 30.0f},
  };
}

class ReduceTest : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(ReduceTest, MatchesNaiveLoop) {
  const ReduceCase& c = GetParam();
  const Shape x_shape = {2, 3, 4, 5};
  const auto x = random_values(num_elements(x_shape), 31, c.lo, c.hi);
  // Contiguous, split (two passes), leading, all (no axes), one negative, a unit-sized reduction.
  const std::vector<std::vector<int64_t>> axes_sets = {{1}, {1, 3}, {0, 2, 3}, {}, {-1}, {0, 1}};
  for (const auto& axes : axes_sets) {
    for (int keepdims : {0, 1}) {
      Attributes a;
      if (!axes.empty()) a.set("axes", axes);
      a.set("keepdims", int64_t(keepdims));
      std::vector<bool> reduced(4, axes.empty());
      for (int64_t ax : axes) reduced[static_cast<size_t>(ax < 0 ? ax + 4 : ax)] = true;
      Shape want_shape, kept_dims;
      for (size_t d = 0; d < 4; ++d) {
        if (!reduced[d]) want_shape.push_back(x_shape[d]);
        if (reduced[d] && keepdims) want_shape.push_back(1);
        kept_dims.push_back(reduced[d] ? 1 : x_shape[d]);
      }
      OpResult r = run_op(c.op, {input(x_shape, x)}, a);
      ASSERT_EQ(r.shapes[0], want_shape) << c.op << " axes " << shape_str(axes);
      // Gather each output element's values by the definition: its coordinates on the
      // kept dims, anything on the reduced ones.
      std::vector<std::vector<double>> groups(static_cast<size_t>(num_elements(kept_dims)));
      for (int64_t i = 0; i < num_elements(x_shape); ++i) {
        int64_t rem = i, out = 0, stride = 1;
        for (size_t d = 4; d-- > 0;) {
          const int64_t coord = rem % x_shape[d];
          rem /= x_shape[d];
          if (!reduced[d]) out += coord * stride;
          stride *= kept_dims[d];
        }
        groups[static_cast<size_t>(out)].push_back(x[static_cast<size_t>(i)]);
      }
      ASSERT_EQ(r.outputs[0].size(), groups.size());
      for (size_t k = 0; k < groups.size(); ++k) {
        const double want = c.f(groups[k]);
        EXPECT_NEAR(r.outputs[0][k], want, 2e-5 * (1 + std::fabs(want)))
            << c.op << " axes " << shape_str(axes) << " " << k;
      }
      EXPECT_EQ(r.cost.flops, c.flops_per_input * 120 + c.flops_per_output * int64_t(groups.size()));
      EXPECT_EQ(r.cost.macs, 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, ReduceTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return std::string(info.param.op); });

TEST(Reduce, AxesAsInputAndNoopWithEmptyAxes) {
  const auto x = random_values(24, 32);
  // ReduceSum at opset 13: axes as a constant input.
  OpResult r = run_op("ReduceSum", {input({2, 3, 4}, x), weight({1}, {1.0f})});
  ASSERT_EQ(r.shapes[0], (Shape{2, 1, 4}));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t w = 0; w < 4; ++w)
      EXPECT_NEAR(r.outputs[0][n * 4 + w], x[n * 12 + w] + x[n * 12 + 4 + w] + x[n * 12 + 8 + w], 1e-6);
  EXPECT_EQ(r.cost.bytes_read, 4 * 24);  // the axes are an index, not data
  Attributes noop;
  noop.set("noop_with_empty_axes", int64_t(1));
  OpResult same = run_op("ReduceSum", {input({2, 3, 4}, x)}, noop);
  ASSERT_EQ(same.shapes[0], (Shape{2, 3, 4}));
  EXPECT_EQ(same.outputs[0], x);
  Attributes twice;
  twice.set("axes", std::vector<int64_t>{1, -2});
  EXPECT_NE(compile_error("ReduceSum", {input({2, 3, 4}, x)}, twice).find("axis -2 is given twice"), std::string::npos);
  Attributes out_of_range;
  out_of_range.set("axes", std::vector<int64_t>{3});
  EXPECT_NE(compile_error("ReduceMax", {input({2, 3, 4}, x)}, out_of_range).find("out of range"), std::string::npos);
}

// A NaN anywhere in a group makes its maximum and minimum NaN, as in numpy.
// int64 data (PyTorch's shape arithmetic, any() and all()): Sum, Prod, Max and Min exactly,
// wrapping past 2^63 as two's complement does; the others stay float-only.
TEST(Reduce, Int64SumsProductsAndExtremesExactly) {
  const Shape xs = {2, 3, 4};
  std::vector<int64_t> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>(i * 7919 % 1000) - 500;
  x[5] = int64_t{1} << 62;  // with x[17] (same output of an axis-0 sum), past 2^63
  x[17] = int64_t{1} << 62;
  using Fold = std::function<uint64_t(uint64_t, int64_t)>;
  const std::vector<std::tuple<const char*, uint64_t, Fold>> ops = {
      {"ReduceSum", 0, [](uint64_t a, int64_t v) { return a + static_cast<uint64_t>(v); }},
      {"ReduceProd", 1, [](uint64_t a, int64_t v) { return a * static_cast<uint64_t>(v); }},
      {"ReduceMax", static_cast<uint64_t>(std::numeric_limits<int64_t>::min()),
       [](uint64_t a, int64_t v) { return static_cast<uint64_t>(std::max(static_cast<int64_t>(a), v)); }},
      {"ReduceMin", static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
       [](uint64_t a, int64_t v) { return static_cast<uint64_t>(std::min(static_cast<int64_t>(a), v)); }},
  };
  for (const auto& [op, initial, fold] : ops)
    for (const std::vector<int64_t>& axes : {std::vector<int64_t>{0}, std::vector<int64_t>{0, 2}}) {
      SCOPED_TRACE(op);
      Graph g;
      g.inputs.push_back({"x", xs, DType::kInt64});
      Attributes a;
      a.set("axes", axes);
      a.set("keepdims", int64_t{0});
      g.nodes.push_back({"reduce", op, {"x"}, {"y"}, a});
      g.outputs = {"y"};
      Session s(compile(std::move(g)));
      s.set_input("x", std::span<const int64_t>(x));
      s.run();
      const Session::Value y = s.value("y");
      ASSERT_EQ(y.type.dtype, DType::kInt64);
      const auto* got = reinterpret_cast<const int64_t*>(y.data);
      const bool last = axes.size() == 2;  // over axes 0 and 2: one value per axis-1 index
      ASSERT_EQ(num_elements(y.type.shape), last ? 3 : 12);
      for (int64_t o = 0; o < (last ? 3 : 12); ++o) {
        uint64_t want = initial;
        for (int64_t i = 0; i < 24; ++i)
          if (last ? i / 4 % 3 == o : i % 12 == o) want = fold(want, x[static_cast<size_t>(i)]);
        EXPECT_EQ(got[o], static_cast<int64_t>(want)) << o;
      }
    }
  Graph mean;
  mean.inputs.push_back({"x", xs, DType::kInt64});
  mean.nodes.push_back({"reduce", "ReduceMean", {"x"}, {"y"}, {}});
  mean.outputs = {"y"};
  EXPECT_THROW(compile(std::move(mean)), ModelError);
}

TEST(Reduce, MaxAndMinPropagateNaN) {
  auto x = random_values(40, 33);
  x[37] = std::numeric_limits<float>::quiet_NaN();
  Attributes a;
  a.set("axes", std::vector<int64_t>{1});
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    OpResult r = run_op(op, {input({2, 20}, x)}, a);
    EXPECT_FALSE(std::isnan(r.outputs[0][0])) << op;
    EXPECT_TRUE(std::isnan(r.outputs[0][1])) << op;
  }
}

// ReduceMean over H and W of N x C x H x W is a global average pool: the same kernel
// (the same bits), the same cost, and the report's kind says so.
TEST(Reduce, MeanOverSpatialAxesIsGlobalAveragePool) {
  const auto x = random_values(2 * 8 * 5 * 5, 34);
  Attributes a;
  a.set("axes", std::vector<int64_t>{2, 3});
  OpResult mean = run_op("ReduceMean", {input({2, 8, 5, 5}, x)}, a);
  OpResult gap = run_op("GlobalAveragePool", {input({2, 8, 5, 5}, x)});
  EXPECT_EQ(mean.kind, "global_average_pool");
  EXPECT_EQ(mean.shapes[0], gap.shapes[0]);
  EXPECT_EQ(mean.outputs[0], gap.outputs[0]);
  EXPECT_EQ(mean.cost, gap.cost);
  a.set("keepdims", int64_t(0));  // MNASNet's x.mean([2, 3])
  EXPECT_EQ(cost_of("ReduceMean", {input({2, 8, 5, 5}, x)}, a).kind, "global_average_pool");
  a.set("axes", std::vector<int64_t>{1, 2, 3});
  EXPECT_EQ(cost_of("ReduceMean", {input({2, 8, 5, 5}, x)}, a).kind, "");
}

// ArgMax and ArgMin along each axis against a loop here: the first extreme, or the last
// with select_last_index; int64 indices; 1 FLOP per input element.
TEST(ArgReduce, IndexOfTheExtreme) {
  const Shape xs = {3, 4, 5};
  auto x = random_values(60, 35);
  for (size_t i = 0; i < x.size(); i += 7) x[i] = 0.75f;  // ties
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t axis : {0, 1, -1}) {
      for (int64_t last : {0, 1}) {
        Attributes a;
        a.set("axis", axis);
        a.set("keepdims", int64_t(0));
        a.set("select_last_index", last);
        auto model = compile(single_op_graph(op, {input(xs, x)}, a));
        Session s(model);
        s.set_input("in0", x);
        s.run();
        const Session::Value v = s.value("out0");
        ASSERT_EQ(v.type.dtype, DType::kInt64);
        const size_t ax = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
        Shape want_shape = xs;
        want_shape.erase(want_shape.begin() + static_cast<std::ptrdiff_t>(ax));
        ASSERT_EQ(v.type.shape, want_shape);
        std::vector<int64_t> got(static_cast<size_t>(num_elements(want_shape)));
        std::memcpy(got.data(), v.data, got.size() * sizeof(int64_t));
        const int64_t stride = ax == 0 ? 20 : ax == 1 ? 5 : 1;
        for (int64_t k = 0; k < num_elements(want_shape); ++k) {
          // k's coordinates without the axis, then the base index with 0 on it.
          const int64_t inner = ax == 2 ? 1 : ax == 1 ? 5 : 20;
          const int64_t base = (k / inner) * inner * xs[ax] + k % inner;
          int64_t best = 0;
          for (int64_t j = 1; j < xs[ax]; ++j) {
            const float c = x[base + j * stride], b = x[base + best * stride];
            if ((std::string(op) == "ArgMax" ? c > b : c < b) || (last && c == b)) best = j;
          }
          EXPECT_EQ(got[static_cast<size_t>(k)], best) << op << " axis " << axis << " last " << last << " " << k;
        }
        EXPECT_EQ(model->steps()[0].cost.flops, 60);
      }
    }
  }
}

}  // namespace
}  // namespace minfer::test
