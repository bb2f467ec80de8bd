// Split, Tile, DepthToSpace, SpaceToDepth and GatherElements on run-time data: shapes
// and element order against loops written here from ONNX's definitions.
#include <gtest/gtest.h>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

Attributes with_int(const char* name, int64_t value) {
  Attributes a;
  a.set(name, value);
  return a;
}

// x [2, 5, 3] split along axis 1 into parts of the given sizes: part k holds x[:, begin_k:begin_k+size_k, :].
void expect_split_parts(const OpResult& r, const std::vector<float>& x, const std::vector<int64_t>& sizes) {
  ASSERT_EQ(r.outputs.size(), sizes.size());
  int64_t begin = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    ASSERT_EQ(r.shapes[k], (Shape{2, sizes[k], 3}));
    std::vector<float> want;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = begin; c < begin + sizes[k]; ++c)
        for (int64_t i = 0; i < 3; ++i) want.push_back(x[(n * 5 + c) * 3 + i]);
    EXPECT_EQ(r.outputs[k], want) << "part " << k;
    begin += sizes[k];
  }
}

TEST(Split, InputAttributeAndEqualForms) {
  const auto x = random_values(2 * 5 * 3, 5);
  const Attributes axis = with_int("axis", 1);
  // Opset 13: sizes as an input.
  expect_split_parts(run_op("Split", {input({2, 5, 3}, x), weight({2}, {2, 3})}, axis, 2), x, {2, 3});
  // Before 13: sizes as an attribute.
  Attributes attr = axis;
  attr.set("split", std::vector<int64_t>{1, 1, 3});
  expect_split_parts(run_op("Split", {input({2, 5, 3}, x)}, attr, 3), x, {1, 1, 3});
  // Equal parts from the number of outputs; opset 18's num_outputs lets the last be smaller.
  const auto y = random_values(2 * 6 * 3, 6);
  OpResult equal = run_op("Split", {input({2, 6, 3}, y)}, axis, 3);
  EXPECT_EQ(equal.shapes[2], (Shape{2, 2, 3}));
  Attributes uneven = axis;
  uneven.set("num_outputs", int64_t{2});
  expect_split_parts(run_op("Split", {input({2, 5, 3}, x)}, uneven, 2), x, {3, 2});
  EXPECT_NE(compile_error("Split", {input({2, 5, 3}, {})}, axis, 2).find("does not split into 2 equal parts"),
            std::string::npos);
  EXPECT_NE(compile_error("Split", {input({2, 5, 3}, {}), weight({2}, {2, 2})}, axis, 2).find("add up to 4"),
            std::string::npos);
  EXPECT_EQ(run_op("Split", {input({2, 5, 3}, x), weight({2}, {2, 3})}, axis, 2).cost.flops, 0);
}

TEST(Tile, RepeatsEveryAxis) {
  const auto x = iota_values(2 * 3);
  const OpResult r = run_op("Tile", {input({2, 3}, x), weight({2}, {2, 3})});
  ASSERT_EQ(r.shapes[0], (Shape{4, 9}));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 9; ++j) EXPECT_EQ(r.outputs[0][i * 9 + j], x[(i % 2) * 3 + j % 3]) << i << "," << j;
  EXPECT_EQ(r.cost.bytes_read, 4 * 6);  // the repeats are an index, not data
  EXPECT_EQ(r.cost.bytes_written, 4 * 36);
}

// ONNX's definitions: DCR reads channel (by * b + bx) * C' + c, CRD c * b * b + by * b + bx,
// for output [n, c, h * b + by, w * b + bx]; SpaceToDepth is DCR's inverse.
TEST(DepthToSpace, DcrAndCrdModesAndSpaceToDepthInverts) {
  const int64_t n = 2, c = 8, h = 2, w = 3, b = 2, co = c / (b * b);
  const auto x = random_values(n * c * h * w, 9);
  for (const char* mode : {"DCR", "CRD"}) {
    Attributes a = with_int("blocksize", b);
    a.set("mode", std::string(mode));
    const OpResult r = run_op("DepthToSpace", {input({n, c, h, w}, x)}, a);
    ASSERT_EQ(r.shapes[0], (Shape{n, co, h * b, w * b}));
    for (int64_t in = 0; in < n; ++in)
      for (int64_t oc = 0; oc < co; ++oc)
        for (int64_t oy = 0; oy < h * b; ++oy)
          for (int64_t ox = 0; ox < w * b; ++ox) {
            const int64_t by = oy % b, bx = ox % b;
            const int64_t ic = std::string(mode) == "DCR" ? (by * b + bx) * co + oc : oc * b * b + by * b + bx;
            EXPECT_EQ(r.outputs[0][((in * co + oc) * h * b + oy) * w * b + ox],
                      x[((in * c + ic) * h + oy / b) * w + ox / b])
                << mode;
          }
    if (std::string(mode) == "DCR") {
      const OpResult back = run_op("SpaceToDepth", {input(r.shapes[0], r.outputs[0])}, with_int("blocksize", b));
      EXPECT_EQ(back.shapes[0], (Shape{n, c, h, w}));
      EXPECT_EQ(back.outputs[0], x);
    }
  }
  EXPECT_NE(compile_error("DepthToSpace", {input({1, 6, 2, 2}, {})}, with_int("blocksize", 2)).find("not a multiple"),
            std::string::npos);
}

// Gather by the definition, y[o, k, i] = x[o, idx[k], i], on 1 and 2 threads (a team
// splits the output's bytes: one index's single long run, and runs of 4100 bytes that
// are no whole lines), negative indices from the end; an index out of range is an error.
TEST(Gather, RunTimeIndicesOnOneAndTwoThreads) {
  struct Case {
    Shape data, indices;
    int64_t axis;
    std::vector<int64_t> idx;
  };
  for (const Case& c : {Case{{3, 64, 3, 49, 8}, {1}, 0, {-2}}, Case{{16, 40, 1025}, {5}, 1, {39, 0, -1, 7, 7}}}) {
    const auto x = iota_values(num_elements(c.data));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < c.axis; ++d) outer *= c.data[d];
    for (size_t d = c.axis + 1; d < c.data.size(); ++d) inner *= c.data[d];
    const int64_t dim = c.data[c.axis], count = static_cast<int64_t>(c.idx.size());
    for (int threads : {1, 2}) {
      Graph g = single_op_graph("Gather", {input(c.data, x), input(c.indices, {})}, with_int("axis", c.axis));
      g.inputs[1].dtype = DType::kInt64;
      CompileOptions options;
      options.num_threads = threads;
      Session s(compile(std::move(g), options));
      s.set_input("in0", x);
      s.set_input("in1", std::span<const int64_t>(c.idx));
      s.run();
      const auto got = s.value("out0");
      ASSERT_EQ(num_elements(got.type.shape), outer * count * inner);
      const auto* y = reinterpret_cast<const float*>(got.data);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < count; ++k) {
          const int64_t from = c.idx[k] < 0 ? c.idx[k] + dim : c.idx[k];
          for (int64_t i = 0; i < inner; ++i)
            ASSERT_EQ(y[(o * count + k) * inner + i], x[(o * dim + from) * inner + i])
                << "threads " << threads << " o " << o << " k " << k << " i " << i;
        }
      std::vector<int64_t> bad = c.idx;
      bad.back() = dim;
      s.set_input("in1", std::span<const int64_t>(bad));
      EXPECT_THROW(s.run(), std::exception);
    }
  }
}

TEST(GatherElements, RunTimeIndicesAlongAnAxis) {
  const auto x = iota_values(3 * 4);
  // y[i][j] = x[i][idx[i][j]] (axis 1), negative indices from the end.
  Graph g = single_op_graph("GatherElements", {input({3, 4}, x), input({3, 2}, {})}, with_int("axis", 1));
  g.inputs[1].dtype = DType::kInt64;
  Session s(compile(std::move(g)));
  const std::vector<int64_t> idx = {0, 3, -1, 1, 2, 2};
  s.set_input("in0", x);
  s.set_input("in1", std::span<const int64_t>(idx));
  s.run();
  const auto got = s.value("out0");
  ASSERT_EQ(got.type.shape, (Shape{3, 2}));
  const auto* y = reinterpret_cast<const float*>(got.data);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      const int64_t k = idx[i * 2 + j] < 0 ? idx[i * 2 + j] + 4 : idx[i * 2 + j];
      EXPECT_EQ(y[i * 2 + j], x[i * 4 + k]);
    }
  const std::vector<int64_t> bad = {0, 4, 0, 0, 0, 0};
  s.set_input("in1", std::span<const int64_t>(bad));
  EXPECT_THROW(s.run(), std::exception);
}

// Trilu keeps j - i >= k (upper) or j - i <= k (lower) in each matrix of the last two axes.
TEST(Trilu, UpperAndLowerWithDiagonalOffset) {
  const int64_t batch = 2, rows = 3, cols = 4;
  const auto x = random_values(batch * rows * cols, 13);
  for (int64_t upper : {0, 1})
    for (int64_t k : {-1, 0, 2}) {
      const OpResult r = run_op("Trilu", {input({batch, rows, cols}, x), weight({}, {static_cast<float>(k)})},
                                with_int("upper", upper));
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t at = (b * rows + i) * cols + j;
            const bool keep = upper ? j - i >= k : j - i <= k;
            EXPECT_EQ(r.outputs[0][at], keep ? x[at] : 0.0f) << "upper " << upper << " k " << k;
          }
    }
}

}  // namespace
}  // namespace minfer::test
