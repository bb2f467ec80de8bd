// Data-movement ops: shapes and element order against definitions written here.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

TEST(Flatten, AxesIncludingZeroAndNegative) {
  auto x = iota_values(2 * 3 * 4 * 5);
  for (auto [axis, want] : std::vector<std::pair<int64_t, Shape>>{
           {0, {1, 120}}, {1, {2, 60}}, {3, {24, 5}}, {4, {120, 1}}, {-1, {24, 5}}}) {
    Attributes a;
    a.set("axis", axis);
    OpResult r = run_op("Flatten", {input({2, 3, 4, 5}, x)}, a);
    EXPECT_EQ(r.shapes[0], want);
    EXPECT_EQ(r.outputs[0], x);
    EXPECT_EQ(r.cost.flops, 0);
  }
}

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  auto x = iota_values(2 * 3 * 4);
  OpResult r = run_op("Reshape", {input({2, 3, 4}, x), weight({3}, {0, -1, 2})});
  EXPECT_EQ(r.shapes[0], (Shape{2, 6, 2}));
  EXPECT_EQ(r.outputs[0], x);
  EXPECT_EQ(r.cost.params, 0);  // the shape tensor is not data the op moves
  EXPECT_THROW(compile(single_op_graph("Reshape", {input({2, 3, 4}, {}), weight({2}, {5, -1})})), ModelError);
  EXPECT_THROW(compile(single_op_graph("Reshape", {input({2, 3, 4}, {}), weight({2}, {-1, -1})})), ModelError);
  EXPECT_THROW(compile(single_op_graph("Reshape", {input({2, 3, 4}, {}), input({2}, {})})), ModelError);
}

TEST(SqueezeUnsqueeze, AttributeAndInputAxes) {
  auto x = iota_values(3 * 4);
  Attributes axes;
  axes.set("axes", std::vector<int64_t>{0, 2});
  EXPECT_EQ(run_op("Squeeze", {input({1, 3, 1, 4}, x)}, axes).shapes[0], (Shape{3, 4}));
  EXPECT_EQ(run_op("Squeeze", {input({1, 3, 1, 4}, x)}).shapes[0], (Shape{3, 4}));
  EXPECT_EQ(run_op("Squeeze", {input({1, 3, 1, 4}, x), weight({1}, {-2})}).shapes[0], (Shape{1, 3, 4}));
  EXPECT_EQ(run_op("Unsqueeze", {input({3, 4}, x), weight({2}, {0, -1})}).shapes[0], (Shape{1, 3, 4, 1}));
  EXPECT_EQ(run_op("Unsqueeze", {input({3, 4}, x)}, axes).shapes[0], (Shape{1, 3, 1, 4}));
  EXPECT_THROW(compile(single_op_graph("Squeeze", {input({2, 3}, {})}, axes)), ModelError);
}

TEST(Concat, AlongMiddleAxis) {
  auto a = iota_values(2 * 2 * 3), b = random_values(2 * 1 * 3, 31);
  Attributes at;
  at.set("axis", int64_t{1});
  OpResult r = run_op("Concat", {input({2, 2, 3}, a), input({2, 1, 3}, b)}, at);
  ASSERT_EQ(r.shapes[0], (Shape{2, 3, 3}));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t i = 0; i < 3; ++i)
        EXPECT_EQ(r.outputs[0][(n * 3 + c) * 3 + i], c < 2 ? a[(n * 2 + c) * 3 + i] : b[n * 3 + i]);
  at.set("axis", int64_t{0});
  EXPECT_THROW(compile(single_op_graph("Concat", {input({2, 2, 3}, {}), input({2, 1, 3}, {})}, at)), ModelError);
}

TEST(Transpose, PermutationAndDefaultReverse) {
  auto x = iota_values(2 * 3 * 4);
  Attributes p;
  p.set("perm", std::vector<int64_t>{1, 2, 0});
  OpResult r = run_op("Transpose", {input({2, 3, 4}, x)}, p);
  ASSERT_EQ(r.shapes[0], (Shape{3, 4, 2}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 2; ++k) EXPECT_EQ(r.outputs[0][(i * 4 + j) * 2 + k], x[(k * 3 + i) * 4 + j]);
  OpResult rev = run_op("Transpose", {input({2, 3, 4}, x)});
  ASSERT_EQ(rev.shapes[0], (Shape{4, 3, 2}));
  EXPECT_EQ(rev.outputs[0][1], x[12]);  // [0,0,1] <- [1,0,0]
  p.set("perm", std::vector<int64_t>{0, 0, 1});
  EXPECT_THROW(compile(single_op_graph("Transpose", {input({2, 3, 4}, {})}, p)), ModelError);
}

TEST(Pad, ConstantReflectEdge) {
  auto x = iota_values(2 * 3);  // [[0,1,2],[3,4,5]]
  OpResult c = run_op("Pad", {input({2, 3}, x), weight({4}, {0, 1, 1, 0}), weight({}, {9.0f})});
  ASSERT_EQ(c.shapes[0], (Shape{3, 4}));
  EXPECT_EQ(c.outputs[0], (std::vector<float>{9, 0, 1, 2, 9, 3, 4, 5, 9, 9, 9, 9}));
  Attributes reflect;
  reflect.set("mode", std::string("reflect"));
  OpResult r = run_op("Pad", {input({2, 3}, x), weight({4}, {0, 2, 0, 1})}, reflect);
  EXPECT_EQ(r.outputs[0], (std::vector<float>{2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}));
  Attributes edge;
  edge.set("mode", std::string("edge"));
  OpResult e = run_op("Pad", {input({2, 3}, x), weight({4}, {1, 0, 0, 1})}, edge);
  EXPECT_EQ(e.outputs[0], (std::vector<float>{0, 1, 2, 2, 0, 1, 2, 2, 3, 4, 5, 5}));
  OpResult crop = run_op("Pad", {input({2, 3}, x), weight({4}, {0, -1, 0, 0})});
  EXPECT_EQ(crop.outputs[0], (std::vector<float>{1, 2, 4, 5}));
}

// Reflect and edge on every axis of a 4-D tensor, against the definition: output index
// i - pad reads x at i mirrored about (reflect, the edge not repeated) or clamped to
// (edge) the input's ends. Threads split the rows.
TEST(Pad, ReflectAndEdgeMatchTheDefinitionOnEveryAxis) {
  const Shape xs{2, 3, 5, 6};
  const std::vector<int64_t> pads{1, 0, 2, 3, 0, 2, 4, 5};
  auto x = random_values(2 * 3 * 5 * 6, 11);
  for (const char* mode : {"reflect", "edge"})
    for (int threads : {1, 2}) {
      Attributes a;
      a.set("mode", std::string(mode));
      OpResult r =
          run_op("Pad", {input(xs, x), weight({8}, std::vector<float>(pads.begin(), pads.end()))}, a, 1, threads);
      const Shape ys{3, 5, 11, 14};
      ASSERT_EQ(r.shapes[0], ys);
      int64_t i = 0;
      for (int64_t n = 0; n < ys[0]; ++n)
        for (int64_t c = 0; c < ys[1]; ++c)
          for (int64_t h = 0; h < ys[2]; ++h)
            for (int64_t w = 0; w < ys[3]; ++w, ++i) {
              const int64_t at[4] = {n, c, h, w};
              int64_t src = 0;
              for (int d = 0; d < 4; ++d) {
                int64_t k = at[d] - pads[d];
                if (mode[0] == 'e') k = std::clamp<int64_t>(k, 0, xs[d] - 1);
                if (k < 0) k = -k;
                if (k >= xs[d]) k = 2 * (xs[d] - 1) - k;
                src = src * xs[d] + k;
              }
              ASSERT_EQ(r.outputs[0][i], x[src]) << mode << " at " << n << "," << c << "," << h << "," << w;
            }
    }
}

// ONNX's test_constant_pad: constant_value is a graph input, known only at run time.
TEST(Pad, ConstantValueMayBeARunTimeInput) {
  auto x = iota_values(2 * 3);
  OpResult c = run_op("Pad", {input({2, 3}, x), weight({4}, {1, 0, 0, 1}), input({}, {-2.5f})});
  ASSERT_EQ(c.shapes[0], (Shape{3, 4}));
  EXPECT_EQ(c.outputs[0], (std::vector<float>{-2.5f, -2.5f, -2.5f, -2.5f, 0, 1, 2, -2.5f, 3, 4, 5, -2.5f}));
  EXPECT_THROW(compile(single_op_graph("Pad", {input({2, 3}, x), weight({4}, {1, 0, 0, 1}), input({2}, {1, 2})})),
               ModelError);  // not a scalar
}

TEST(IdentityAndDropout, PassThrough) {
  auto x = random_values(7, 32);
  EXPECT_EQ(run_op("Identity", {input({7}, x)}).outputs[0], x);
  EXPECT_EQ(run_op("Dropout", {input({7}, x), weight({}, {0.5f})}).outputs[0], x);
  EXPECT_THROW(compile(single_op_graph("Dropout", {input({7}, {}), weight({}, {0.5f}), weight({}, {1.0f})})),
               ModelError);
}

TEST(ShapeArithmetic, SizesPast64BitsAreRefusedNotWrapped) {
  // Pads whose sum wraps around once gave [1, 4] an output of [1, 2].
  Attributes pads;
  pads.set("pads", std::vector<int64_t>{0, INT64_MAX, 0, INT64_MAX});
  EXPECT_EQ(compile_error("Pad", {input({1, 4}, {})}, pads),
            "<test>: node 'node' (Pad): the sum of 4 + 9223372036854775807 + 9223372036854775807 overflows 64 bits");
  Attributes axis0;
  axis0.set("axis", int64_t{0});
  EXPECT_EQ(compile_error("Concat", {input({int64_t{1} << 62}, {}), input({int64_t{1} << 62}, {})}, axis0),
            "<test>: node 'node' (Concat): the sum of 4611686018427387904 + 4611686018427387904 overflows 64 bits");
  EXPECT_EQ(compile_error("Reshape", {input({16}, {}), weight({3}, {0x1.0p52f, 0x1.0p52f, -1})}),
            "<test>: node 'node' (Reshape): the product of 4503599627370496 x 4503599627370496 overflows 64 bits");
}

}  // namespace
}  // namespace minfer::test
