// The batch-1 product (ops/kernels/gemv.h): gemm() with one row of A and B packed by
// PackedMatrix::pack_b_for_gemv, for every kernel under test, against a double-precision
// loop written here; the same bits as the GEMM's own tiles for that row, and for one
// and two threads; and the thread count it chooses.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "ops/kernels/gemm.h"
#include "ops/kernels/gemv.h"
#include "tests/isa_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

using kernels::GemmBias;
using kernels::GemmEpilogue;
using kernels::GemmKernel;
using kernels::GemmOperand;
using kernels::PackedMatrix;

struct GemvCase {
  int64_t n, k;
  bool ta = false, tb = true;  // A stored [K, 1] (column, row stride 1 + pad); B stored [N, K]
  float alpha = 1.0f, beta = 0.0f;
  GemmBias bias = GemmBias::kNone;
  ActivationKind act = ActivationKind::kNone;
};

std::string describe(const GemvCase& c) {
  return fmt::format("1x{}x{} ta={} tb={} alpha={} beta={} bias={} act={}", c.n, c.k, c.ta, c.tb, c.alpha, c.beta,
                     int(c.bias), int(c.act));
}

Activation activation_of(ActivationKind kind) {
  Activation a;
  a.kind = kind;
  if (kind == ActivationKind::kClip) {
    a.alpha = -0.25f;
    a.beta = 0.5f;
  }
  if (kind == ActivationKind::kLeakyRelu) a.alpha = 0.1f;
  return a;
}

double activate(ActivationKind kind, double x) {
  switch (kind) {
    case ActivationKind::kRelu: return x > 0 ? x : 0;
    case ActivationKind::kClip: return x < -0.25 ? -0.25 : (x > 0.5 ? 0.5 : x);
    case ActivationKind::kLeakyRelu: return x < 0 ? 0.1 * x : x;
    case ActivationKind::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    default: return x;
  }
}

constexpr int64_t kPad = 3;  // extra floats in each leading dimension

struct Operands {
  GemvCase c;
  int64_t lda, ldb;
  std::vector<float> a, b, y0, bias;

  explicit Operands(const GemvCase& cs) : c(cs) {
    lda = cs.ta ? 1 + kPad : cs.k + kPad;  // A [K, 1] transposed, or [1, K]
    ldb = (cs.tb ? cs.k : cs.n) + kPad;
    a = random_values(cs.ta ? cs.k * lda : lda, 11);
    b = random_values((cs.tb ? cs.n : cs.k) * ldb, 12);
    y0 = random_values(cs.n + kPad, 13);
    bias = random_values(cs.bias == GemmBias::kPerRow ? 1 : cs.n, 14);
  }
  float x(int64_t p) const { return c.ta ? a[p * lda] : a[p]; }
  float w(int64_t p, int64_t j) const { return c.tb ? b[j * ldb + p] : b[p * ldb + j]; }

  PackedMatrix pack(const GemmKernel& kn) const {
    return PackedMatrix::pack_b_for_gemv(kn, b.data(), ldb, c.tb, c.k, c.n);
  }
  std::vector<float> run(const GemmKernel& kn, const GemmOperand& op_b, int threads) const {
    GemmEpilogue ep;
    ep.bias_kind = c.bias;
    ep.bias = c.bias == GemmBias::kNone ? nullptr : bias.data();
    ep.activation = activation_of(c.act);
    std::vector<float> y = y0;
    std::vector<float> ws(kernels::gemm_workspace_bytes(kn, 1, c.n, c.k, threads, kernels::GemmPacked::kNone) / 4);
    kernels::gemm(1, c.n, c.k, c.alpha, GemmOperand(a.data(), lda, c.ta), op_b, c.beta, y.data(), c.n + kPad, ep, ws,
                  threads, kn);
    return y;
  }
  std::vector<float> run_gemv(const GemmKernel& kn, int threads) const {
    const PackedMatrix w = pack(kn);
    return run(kn, GemmOperand(w), threads);
  }

  // Each output by its definition, summed in double, and its rounding allowance.
  void expect_matches(const std::vector<float>& got, const std::string& what) const {
    int64_t bad = 0;
    for (int64_t j = 0; j < c.n + kPad; ++j) {
      if (j >= c.n) {  // past N: untouched
        EXPECT_EQ(got[j], y0[j]) << what << " j=" << j;
        continue;
      }
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        sum += double(x(p)) * double(w(p, j));
        magnitude += std::fabs(double(x(p)) * double(w(p, j)));
      }
      double want = c.alpha * sum + c.beta * double(y0[j]);
      if (c.bias == GemmBias::kPerRow) want += bias[0];
      if (c.bias == GemmBias::kPerColumn) want += bias[j];
      want = activate(c.act, want);
      const double tol = 1e-5 * (2.0 + std::fabs(c.alpha) * magnitude + std::fabs(c.beta * y0[j]));
      if (!(std::fabs(got[j] - want) <= tol) && bad++ < 3)
        ADD_FAILURE() << what << ": y[" << j << "] = " << got[j] << ", want " << want;
    }
    EXPECT_EQ(bad, 0) << what;
  }
};

std::vector<const GemmKernel*> kernels_under_test() {
  std::vector<const GemmKernel*> kernels;
  for (Isa isa : isas_under_test()) kernels.push_back(kernels::gemm_kernel_for(isa));
  return kernels;
}

// Sizes around a panel, a group (32, 64 or 128 columns) and the k-blocks (kc 192-256).
std::vector<GemvCase> shapes() {
  std::vector<GemvCase> s;
  for (int64_t n : {1, 7, 17, 32, 33, 64, 100, 128, 129, 300})
    for (int64_t k : {1, 5, 256, 1001}) s.push_back({n, k});
  return s;
}

TEST(Gemv, MatchesDoubleLoopOverShapesAndLayouts) {
  for (const GemmKernel* kn : kernels_under_test())
    for (const GemvCase& shape : shapes())
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          GemvCase c = shape;
          c.ta = ta;
          c.tb = tb;
          c.alpha = 1.5f;
          const Operands o(c);
          o.expect_matches(o.run_gemv(*kn, 1), fmt::format("{} {}", kn->name, describe(c)));
        }
}

TEST(Gemv, EpilogueBetaBiasAndActivation) {
  for (const GemmKernel* kn : kernels_under_test())
    for (float beta : {0.0f, 1.0f, -0.5f})
      for (GemmBias bias : {GemmBias::kNone, GemmBias::kPerRow, GemmBias::kPerColumn})
        for (ActivationKind act : {ActivationKind::kNone, ActivationKind::kRelu, ActivationKind::kClip,
                                   ActivationKind::kLeakyRelu, ActivationKind::kSigmoid})
          for (const GemvCase& shape : {GemvCase{17, 1001}, GemvCase{200, 300}}) {
            GemvCase c = shape;
            c.alpha = 0.75f;
            c.beta = beta;
            c.bias = bias;
            c.act = act;
            const Operands o(c);
            o.expect_matches(o.run_gemv(*kn, 1), fmt::format("{} {}", kn->name, describe(c)));
          }
}

// The GEMV sums each element in the GEMM's k-blocks and order and finishes it with the
// GEMM's epilogue: a layer gives the same bits whichever path runs it.
TEST(Gemv, SameBitsAsTheGemmTiles) {
  for (const GemmKernel* kn : kernels_under_test())
    for (float beta : {0.0f, 0.5f})
      for (const GemvCase& shape : {GemvCase{1, 1}, GemvCase{17, 1001}, GemvCase{129, 7}, GemvCase{1000, 512}}) {
        GemvCase c = shape;
        c.beta = beta;
        c.bias = GemmBias::kPerColumn;
        c.act = ActivationKind::kLeakyRelu;
        const Operands o(c);
        const PackedMatrix tiles = PackedMatrix::pack_b(*kn, o.b.data(), o.ldb, c.tb, c.k, c.n);
        EXPECT_EQ(o.run_gemv(*kn, 1), o.run(*kn, GemmOperand(tiles), 1)) << kn->name << " " << describe(c);
      }
}

TEST(Gemv, TwoThreadsGiveTheSameBitsAsOne) {
  for (const GemmKernel* kn : kernels_under_test())
    for (const GemvCase& shape : {GemvCase{1000, 1280}, GemvCase{3000, 400}, GemvCase{513, 2100}}) {
      GemvCase c = shape;
      c.beta = 0.25f;
      c.bias = GemmBias::kPerColumn;
      c.act = ActivationKind::kClip;
      const Operands o(c);
      ASSERT_EQ(kernels::gemv_threads(c.n, c.k, 2, *kn), 2) << kn->name << " " << describe(c);
      const std::vector<float> one = o.run_gemv(*kn, 1);
      EXPECT_EQ(o.run_gemv(*kn, 2), one) << kn->name << " " << describe(c);
      o.expect_matches(one, fmt::format("{} {}", kn->name, describe(c)));
    }
}

TEST(Gemv, ThreadsOnlyForEnoughWork) {
  const GemmKernel& kn = kernels::active_gemm_kernel();
  EXPECT_EQ(kernels::gemv_threads(17, 1, 2, kn), 1);
  EXPECT_EQ(kernels::gemv_threads(1000, 64, 2, kn), 1);       // 64K multiply-adds: not worth waking a thread
  EXPECT_EQ(kernels::gemv_threads(1000, 400, 2, kn), 1);      // RegNetX-400MF's classifier: nor 400K
  EXPECT_EQ(kernels::gemv_threads(kn.nr, 100000, 2, kn), 1);  // one group of columns: nothing to split
  EXPECT_EQ(kernels::gemv_threads(1000, 1280, 2, kn), 2);
  EXPECT_EQ(kernels::gemv_threads(1000, 1280, 1, kn), 1);
}

TEST(Gemv, PackedForOneRowOnly) {
  const GemmKernel& kn = kernels::active_gemm_kernel();
  const Operands o(GemvCase{40, 30});
  const PackedMatrix w = o.pack(kn);
  EXPECT_EQ(w.side(), PackedMatrix::Side::kBGemv);
  std::vector<float> a(2 * 30), y(2 * 40);
  std::vector<float> ws(kernels::gemm_workspace_bytes(kn, 2, 40, 30, 1, kernels::GemmPacked::kB) / 4);
  EXPECT_THROW(
      kernels::gemm(2, 40, 30, 1.0f, GemmOperand(a.data(), 30), GemmOperand(w), 0.0f, y.data(), 40, {}, ws, 1, kn),
      std::invalid_argument);
}

}  // namespace
}  // namespace minfer::test
