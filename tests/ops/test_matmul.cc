// Gemm and MatMul against triple loops written here, with constant and run-time
// operands; costs M*K*N MACs.
#include <gtest/gtest.h>

#include "ops/kernels/gemm.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

// Row-major op(A)[m,k] * op(B)[k,n] by definition.
std::vector<float> naive_product(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k,
                                 int64_t n, bool ta, bool tb) {
  std::vector<float> y(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += double(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      y[i * n + j] = static_cast<float>(acc);
    }
  return y;
}

struct GemmCase {
  int64_t m, k, n;
  bool ta, tb;
  float alpha, beta;
  Shape c_shape;  // empty: no C
  // Which operands are initializers (packed at load, or C folded into the bias).
  bool a_const = false, b_const = true, c_const = true;
};

void PrintTo(const GemmCase& g, std::ostream* os) {
  *os << g.m << "x" << g.k << "x" << g.n << (g.ta ? "_tA" : "") << (g.tb ? "_tB" : "") << "_C" << g.c_shape.size()
      << "_const" << (g.a_const ? "A" : "") << (g.b_const ? "B" : "") << (g.c_const ? "C" : "");
}

TestTensor operand(bool constant, Shape shape, std::vector<float> data) {
  return constant ? weight(std::move(shape), std::move(data)) : input(std::move(shape), std::move(data));
}

class GemmTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmTest, MatchesDefinition) {
  const GemmCase g = GetParam();
  auto a = random_values(g.m * g.k, 1), b = random_values(g.k * g.n, 2);
  Attributes at;
  at.set("transA", int64_t{g.ta});
  at.set("transB", int64_t{g.tb});
  at.set("alpha", double{g.alpha});
  at.set("beta", double{g.beta});
  std::vector<TestTensor> in = {operand(g.a_const, g.ta ? Shape{g.k, g.m} : Shape{g.m, g.k}, a),
                                operand(g.b_const, g.tb ? Shape{g.n, g.k} : Shape{g.k, g.n}, b)};
  std::vector<float> c;
  if (!g.c_shape.empty()) {
    c = random_values(num_elements(g.c_shape), 3);
    in.push_back(operand(g.c_const, g.c_shape, c));
  }
  std::vector<float> want = naive_product(a, b, g.m, g.k, g.n, g.ta, g.tb);
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      float& y = want[i * g.n + j];
      y *= g.alpha;
      if (!c.empty()) {
        // C broadcasts: [n], [m,1], [1,n], [m,n] or [1].
        const Shape& s = g.c_shape;
        int64_t ci = 0;
        if (s.size() == 1)
          ci = s[0] == 1 ? 0 : j;
        else
          ci = (s[0] == 1 ? 0 : i) * s[1] + (s[1] == 1 ? 0 : j);
        y += g.beta * c[ci];
      }
    }
  for (int threads : {1, 2}) {
    OpResult r = run_op("Gemm", in, at, 1, threads);
    ASSERT_EQ(r.shapes[0], (Shape{g.m, g.n}));
    EXPECT_LT(max_rel_error(r.outputs[0], want), 1e-5);
    EXPECT_EQ(r.cost.macs, g.m * g.k * g.n);
    EXPECT_EQ(r.cost.flops, 2 * g.m * g.k * g.n);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmTest,
                         ::testing::Values(GemmCase{3, 4, 5, false, false, 1.0f, 1.0f, {}},
                                           GemmCase{7, 9, 5, false, true, 1.0f, 1.0f, {5}},
                                           GemmCase{6, 3, 8, true, false, 0.5f, 2.0f, {6, 1}},
                                           GemmCase{5, 17, 4, true, true, 1.5f, 0.25f, {5, 4}},
                                           GemmCase{1, 64, 10, false, true, 1.0f, 1.0f, {1, 10}},
                                           GemmCase{4, 1, 3, false, false, 1.0f, 1.0f, {1}},
                                           // Every operand a run-time input: C as the bias (beta 1) or copied.
                                           GemmCase{9, 20, 30, false, true, 1.0f, 1.0f, {30}, false, false, false},
                                           GemmCase{9, 20, 30, true, false, 1.0f, 0.5f, {9, 1}, false, false, false},
                                           // A constant (packed), B an input.
                                           GemmCase{13, 40, 7, true, true, 2.0f, 1.0f, {13, 1}, true, false, true},
                                           // Large enough for cache blocks and a two-thread split.
                                           GemmCase{70, 300, 90, false, true, 1.0f, 1.0f, {90}},
                                           GemmCase{1, 520, 1000, false, true, 1.0f, 1.0f, {1000}}));

TEST(Gemm, DetailsNameTheKernelAndThePackedOperands) {
  auto model = compile(single_op_graph("Gemm", {input({2, 3}, {}), weight({3, 4}, std::vector<float>(12, 1.0f))}));
  const nlohmann::json& d = model->steps()[0].facts().details;
  EXPECT_EQ(d.at("gemm_kernel"), kernels::active_gemm_kernel().name);
  EXPECT_EQ(d.at("prepacked"), "B");
}

TEST(MatMul, Batched2DAndBroadcast) {
  // [2,3,4,5] x [5,6] -> [2,3,4,6]; and [3,1,4,5] x [2,5,6] -> [3,2,4,6]
  auto a = random_values(2 * 3 * 4 * 5, 4), b = random_values(5 * 6, 5);
  OpResult r = run_op("MatMul", {input({2, 3, 4, 5}, a), weight({5, 6}, b)});
  ASSERT_EQ(r.shapes[0], (Shape{2, 3, 4, 6}));
  for (int64_t i = 0; i < 6; ++i) {
    std::vector<float> ai(a.begin() + i * 20, a.begin() + (i + 1) * 20);
    std::vector<float> want = naive_product(ai, b, 4, 5, 6, false, false);
    std::vector<float> got(r.outputs[0].begin() + i * 24, r.outputs[0].begin() + (i + 1) * 24);
    EXPECT_LT(max_rel_error(got, want), 1e-5);
  }
  EXPECT_EQ(r.cost.macs, 6 * 4 * 5 * 6);

  auto a2 = random_values(3 * 4 * 5, 6), b2 = random_values(2 * 5 * 6, 7);
  OpResult r2 = run_op("MatMul", {input({3, 1, 4, 5}, a2), input({2, 5, 6}, b2)});
  ASSERT_EQ(r2.shapes[0], (Shape{3, 2, 4, 6}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      std::vector<float> ai(a2.begin() + i * 20, a2.begin() + (i + 1) * 20);
      std::vector<float> bj(b2.begin() + j * 30, b2.begin() + (j + 1) * 30);
      std::vector<float> want = naive_product(ai, bj, 4, 5, 6, false, false);
      const int64_t off = (i * 2 + j) * 24;
      std::vector<float> got(r2.outputs[0].begin() + off, r2.outputs[0].begin() + off + 24);
      EXPECT_LT(max_rel_error(got, want), 1e-5);
    }
}

// One B for every batch matrix (B 2-D, or with batch dims of ones; constant or not): A's
// matrices run as the rows of one product, on 1 and 2 threads; with a fused bias
// (fuse_matmul_bias) added per column and a fused Relu after it.
TEST(MatMul, OneBForEveryBatchMatrixAndAFusedBias) {
  const int64_t batch = 2 * 3, m = 7, k = 9, n = 20;
  auto a = random_values(batch * m * k, 8), b = random_values(k * n, 9), bias = random_values(n, 10);
  Attributes fused;
  fused.set("fused_bias", int64_t{1});
  fused.set("activation", std::string("Relu"));
  for (int threads : {1, 2})
    for (const TestTensor& bi : {weight({k, n}, b), input({k, n}, b), weight({1, 1, k, n}, b)}) {
      const OpResult r = run_op("MatMul", {input({2, 3, m, k}, a), bi}, {}, 1, threads);
      const OpResult f = run_op("MatMul", {input({2, 3, m, k}, a), bi, weight({n}, bias)}, fused, 1, threads);
      ASSERT_EQ(r.shapes[0], (Shape{2, 3, m, n}));
      ASSERT_EQ(f.shapes[0], (Shape{2, 3, m, n}));
      for (int64_t i = 0; i < batch; ++i) {
        std::vector<float> ai(a.begin() + i * m * k, a.begin() + (i + 1) * m * k);
        const std::vector<float> want = naive_product(ai, b, m, k, n, false, false);
        std::vector<float> got(r.outputs[0].begin() + i * m * n, r.outputs[0].begin() + (i + 1) * m * n);
        EXPECT_LT(max_rel_error(got, want), 1e-5) << "batch matrix " << i << " threads " << threads;
        for (int64_t e = 0; e < m * n; ++e)
          EXPECT_EQ(f.outputs[0][i * m * n + e], std::max(0.0f, got[e] + bias[e % n])) << e;
      }
      EXPECT_EQ(f.cost.flops, r.cost.flops + 2 * batch * m * n);  // the bias's add and the Relu's
    }
  EXPECT_THROW(compile(single_op_graph(
                   "MatMul",
                   {input({2, 3}, {}), weight({3, 4}, random_values(12, 1)), weight({5}, random_values(5, 2))}, fused)),
               ModelError);
}

TEST(MatMul, ConstantBatchedBIsPackedPerMatrix) {
  // [3,1,4,5] x constant [2,5,6] -> [3,2,4,6], for 1 and 2 threads.
  auto a = random_values(3 * 4 * 5, 10), b = random_values(2 * 5 * 6, 11);
  for (int threads : {1, 2}) {
    OpResult r = run_op("MatMul", {input({3, 1, 4, 5}, a), weight({2, 5, 6}, b)}, {}, 1, threads);
    ASSERT_EQ(r.shapes[0], (Shape{3, 2, 4, 6}));
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        std::vector<float> ai(a.begin() + i * 20, a.begin() + (i + 1) * 20);
        std::vector<float> bj(b.begin() + j * 30, b.begin() + (j + 1) * 30);
        const int64_t off = (i * 2 + j) * 24;
        std::vector<float> got(r.outputs[0].begin() + off, r.outputs[0].begin() + off + 24);
        EXPECT_LT(max_rel_error(got, naive_product(ai, bj, 4, 5, 6, false, false)), 1e-5);
      }
  }
}

// Attention-like products (a batch of heads, each its own B, run-time or constant): two
// threads split the batch matrices where they share evenly (each GEMM then on one
// thread), else each GEMM; either way every element is summed in the same order, so the
// bits match one thread's.
TEST(MatMul, TwoThreadsSplitTheBatchMatricesWhereTheyShareEvenly) {
  const int64_t m = 67, k = 64, n = 67;
  for (const int64_t batch : {int64_t{12}, int64_t{3}})
    for (const bool constant_b : {false, true}) {
      auto a = random_values(batch * m * k, 12), b = random_values(batch * k * n, 13);
      const auto run = [&](int threads) {
        return run_op("MatMul", {input({batch, m, k}, a), operand(constant_b, {batch, k, n}, b)}, {}, 1, threads);
      };
      const OpResult one = run(1), two = run(2);
      ASSERT_EQ(two.shapes[0], (Shape{batch, m, n}));
      EXPECT_EQ(two.outputs[0], one.outputs[0]) << "batch " << batch << (constant_b ? " constant B" : "");
      for (int64_t i = 0; i < batch; ++i) {
        const std::vector<float> ai(a.begin() + i * m * k, a.begin() + (i + 1) * m * k);
        const std::vector<float> bi(b.begin() + i * k * n, b.begin() + (i + 1) * k * n);
        const std::vector<float> got(two.outputs[0].begin() + i * m * n, two.outputs[0].begin() + (i + 1) * m * n);
        EXPECT_LT(max_rel_error(got, naive_product(ai, bi, m, k, n, false, false)), 1e-5) << "matrix " << i;
      }
      // 12 matrices share evenly between two threads; 3 do not (2 + 1), so each GEMM splits.
      EXPECT_EQ(two.details.value("batch_threads", 1), batch == 12 ? 2 : 1);
      EXPECT_FALSE(one.details.contains("batch_threads"));
    }
}

TEST(MatMul, VectorOperandsAndSeedCost) {
  // The seed's [1,M] x [M,N] = 2*M*N FLOPs, and the 1-D forms drop their unit dim.
  const int64_t m = 37, n = 11;
  auto a = random_values(m, 8), b = random_values(m * n, 9);
  OpResult r = run_op("MatMul", {input({1, m}, a), weight({m, n}, b)});
  EXPECT_EQ(r.cost.flops, 2 * m * n);
  EXPECT_EQ(r.cost.macs, m * n);
  OpResult v = run_op("MatMul", {input({m}, a), weight({m, n}, b)});
  EXPECT_EQ(v.shapes[0], (Shape{n}));
  EXPECT_EQ(v.outputs[0], r.outputs[0]);
  EXPECT_LT(max_rel_error(v.outputs[0], naive_product(a, b, 1, m, n, false, false)), 1e-5);
  OpResult dot = run_op("MatMul", {input({m}, a), input({m}, a)});
  EXPECT_EQ(dot.shapes[0], Shape{});
}

TEST(MatMul, RejectsMismatchedInnerDims) {
  EXPECT_THROW(compile(single_op_graph("MatMul", {input({2, 3}, {}), input({4, 5}, {})})), ModelError);
  EXPECT_THROW(compile(single_op_graph("Gemm", {input({2, 3}, {}), input({4, 5}, {})})), ModelError);
  EXPECT_THROW(compile(single_op_graph("Gemm", {input({2, 3}, {}), input({3, 5}, {}), input({3}, {})})), ModelError);
}

}  // namespace
}  // namespace minfer::test
