// TopK and CumSum against loops written here, along every axis, on 1 and 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

template <typename T>
std::vector<T> session_values(const Session& s, const std::string& name, DType dtype) {
  const Session::Value v = s.value(name);
  EXPECT_EQ(v.type.dtype, dtype) << name;
  std::vector<T> got(static_cast<size_t>(num_elements(v.type.shape)));
  std::memcpy(got.data(), v.data, got.size() * sizeof(T));
  return got;
}

// The k largest (smallest) of each slice by a stable sort of its (value, index) pairs:
// equal values in index order, a NaN above every number.
TEST(TopK, LargestAndSmallestAlongEachAxis) {
  const Shape xs = {4, 6, 5};
  auto x = random_values(120, 41);
  for (size_t i = 0; i < x.size(); i += 5) x[i] = 0.25f;  // ties
  x[7] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t axis : {0, 1, -1})
    for (int64_t largest : {0, 1})
      for (int threads : {1, 2}) {
        const size_t ax = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
        const int64_t k = xs[ax] - 1;
        Attributes a;
        a.set("axis", axis);
        a.set("largest", largest);
        CompileOptions options;
        options.num_threads = threads;
        auto model = compile(single_op_graph("TopK", {input(xs, x), weight({1}, {float(k)})}, a, 2), options);
        Session s(model);
        s.set_input("in0", x);
        s.run();
        const std::vector<float> values = session_values<float>(s, "out0", DType::kFloat32);
        const std::vector<int64_t> indices = session_values<int64_t>(s, "out1", DType::kInt64);
        Shape ys = xs;
        ys[ax] = k;
        ASSERT_EQ(s.value("out0").type.shape, ys);
        const int64_t stride = ax == 0 ? 30 : ax == 1 ? 5 : 1;
        const int64_t slices = 120 / xs[ax];
        for (int64_t sl = 0; sl < slices; ++sl) {
          const int64_t base = (sl / stride) * stride * xs[ax] + sl % stride;
          const int64_t out_base = (sl / stride) * stride * k + sl % stride;
          std::vector<int64_t> order(static_cast<size_t>(xs[ax]));
          for (int64_t j = 0; j < xs[ax]; ++j) order[static_cast<size_t>(j)] = j;
          const auto key = [&](int64_t j) {
            const float v = x[base + j * stride];
            const float big = std::isnan(v) ? std::numeric_limits<float>::infinity() : v;
            return largest ? -double(big) - (std::isnan(v) ? 1.0 : 0.0) : double(big) + (std::isnan(v) ? 1.0 : 0.0);
          };
          std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return key(i) < key(j); });
          for (int64_t j = 0; j < k; ++j) {
            const int64_t want = order[static_cast<size_t>(j)];
            EXPECT_EQ(indices[out_base + j * stride], want) << "axis " << axis << " largest " << largest << " " << sl;
            const float got = values[out_base + j * stride], expect = x[base + want * stride];
            EXPECT_TRUE(got == expect || (std::isnan(got) && std::isnan(expect)));
          }
        }
      }
}

TEST(TopK, RefusesAKLargerThanTheAxis) {
  EXPECT_NE(compile_error("TopK", {input({2, 3}, random_values(6, 1)), weight({1}, {4.0f})}, {}, 2)
                .find("K 4 is larger than the axis's 3 elements"),
            std::string::npos);
}

// y_j = sum of x_i for i <= j (i < j when exclusive), i >= j (i > j) in reverse.
TEST(CumSum, InclusiveExclusiveForwardReverseAlongEachAxis) {
  const Shape xs = {3, 7, 4};
  auto x = random_values(84, 42);
  for (int64_t axis : {0, 1, -1})
    for (int64_t exclusive : {0, 1})
      for (int64_t reverse : {0, 1})
        for (int threads : {1, 2}) {
          Attributes a;
          a.set("exclusive", exclusive);
          a.set("reverse", reverse);
          OpResult r = run_op("CumSum", {input(xs, x), weight({}, {float(axis)})}, a, 1, threads);
          ASSERT_EQ(r.shapes[0], xs);
          const size_t ax = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
          const int64_t stride = ax == 0 ? 28 : ax == 1 ? 4 : 1;
          for (int64_t i = 0; i < 84; ++i) {
            const int64_t j = i / stride % xs[ax], base = i - j * stride;
            double want = 0;
            for (int64_t t = 0; t < xs[ax]; ++t) {
              const bool in = reverse ? (exclusive ? t > j : t >= j) : (exclusive ? t < j : t <= j);
              if (in) want += x[base + t * stride];
            }
            EXPECT_NEAR(r.outputs[0][i], want, 1e-5)
                << "axis " << axis << " exclusive " << exclusive << " reverse " << reverse << " at " << i;
          }
          EXPECT_EQ(r.cost.flops, 84);
        }
}

}  // namespace
}  // namespace minfer::test
