// The packed SGEMM against ops/reference/gemm, for every kernel under test (isas_under_test()), over edge
// shapes, transposes, alpha/beta, leading dimensions, packed operands, the bias and
// activation epilogue, and 1 and 2 threads (whose results must be bit-identical).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <xsimd/xsimd.hpp>

#include "ops/kernels/gemm.h"
#include "ops/reference/gemm.h"
#include "tests/isa_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

using kernels::GemmBias;
using kernels::GemmEpilogue;
using kernels::GemmKernel;
using kernels::GemmOperand;
using kernels::GemmPacked;
using kernels::PackedMatrix;

struct Case {
  int64_t m, n, k;
  bool ta = false, tb = false;
  float alpha = 1.0f, beta = 0.0f;
  int64_t pad = 0;  // extra columns in every leading dimension
  GemmBias bias = GemmBias::kNone;
  ActivationKind act = ActivationKind::kNone;
  bool tc = false;      // C stored transposed: [N, M]
  bool addend = false;  // a matrix laid out as C added before the activation
  int64_t kc = 0;       // the K blocking packed operands are packed with (0: the kernel's)
};

std::string describe(const Case& c) {
  return fmt::format("{}x{}x{} ta={} tb={} tc={} alpha={} beta={} pad={} bias={} act={} kc={}", c.m, c.n, c.k, c.ta,
                     c.tb, c.tc, c.alpha, c.beta, c.pad, int(c.bias), int(c.act), c.kc);
}

Activation activation_of(ActivationKind kind) {
  Activation a;
  a.kind = kind;
  if (kind == ActivationKind::kClip) {
    a.alpha = -0.25f;
    a.beta = 0.5f;
  }
  if (kind == ActivationKind::kLeakyRelu) a.alpha = 0.1f;
  if (kind == ActivationKind::kHardSigmoid) {
    a.alpha = 0.2f;
    a.beta = 0.5f;
  }
  if (kind == ActivationKind::kSwish) a.alpha = 1.0f;
  return a;
}

// The activations by their definitions, independent of ops/activation.cc.
float activate(ActivationKind kind, float x) {
  switch (kind) {
    case ActivationKind::kRelu: return x > 0 ? x : 0;
    case ActivationKind::kClip: return x < -0.25f ? -0.25f : (x > 0.5f ? 0.5f : x);
    case ActivationKind::kLeakyRelu: return x < 0 ? 0.1f * x : x;
    case ActivationKind::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case ActivationKind::kHardSigmoid: return std::clamp(0.2f * x + 0.5f, 0.0f, 1.0f);
    case ActivationKind::kHardSwish: return x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f);
    case ActivationKind::kSwish: return x / (1.0f + std::exp(-x));
    default: return x;
  }
}

// Operands stored as the case says (transposed or not, rows padded), and C.
struct Operands {
  Case c;
  int64_t lda, ldb, ldc;
  std::vector<float> a, b, c0, bias, addend;

  explicit Operands(const Case& cs, uint32_t seed = 1) : c(cs) {
    lda = (cs.ta ? cs.m : cs.k) + cs.pad;
    ldb = (cs.tb ? cs.k : cs.n) + cs.pad;
    ldc = (cs.tc ? cs.m : cs.n) + cs.pad;
    a = random_values((cs.ta ? cs.k : cs.m) * lda, seed);
    b = random_values((cs.tb ? cs.n : cs.k) * ldb, seed + 1);
    c0 = random_values(lines() * ldc, seed + 2);
    bias = random_values(cs.bias == GemmBias::kPerRow ? cs.m : cs.n, seed + 3);
    if (cs.addend) addend = random_values(lines() * ldc, seed + 4);
  }

  // C's stored lines and the valid length of each (the rest is padding).
  int64_t lines() const { return c.tc ? c.n : c.m; }
  int64_t line_length() const { return c.tc ? c.m : c.n; }
  // Where C[i, j] is stored.
  int64_t at(int64_t i, int64_t j) const { return c.tc ? j * ldc + i : i * ldc + j; }

  // reference::gemm on a row-major copy of C, then the epilogue by definition.
  std::vector<float> expected() const {
    std::vector<float> rm(c.m * c.n);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) rm[i * c.n + j] = c0[at(i, j)];
    reference::gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta, rm.data(), c.n);
    std::vector<float> y = c0;
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        float x = rm[i * c.n + j];
        if (c.bias == GemmBias::kPerRow) x += bias[i];
        if (c.bias == GemmBias::kPerColumn) x += bias[j];
        if (c.addend) x += addend[at(i, j)];
        y[at(i, j)] = activate(c.act, x);
      }
    return y;
  }

  // Rounding allowance per element: float error grows with the sum of |products|.
  std::vector<float> tolerance() const {
    std::vector<float> abs_a(a.size()), abs_b(b.size()), rm(c.m * c.n, 0.0f), t(lines() * ldc, 0.0f);
    for (size_t i = 0; i < a.size(); ++i) abs_a[i] = std::fabs(a[i]);
    for (size_t i = 0; i < b.size(); ++i) abs_b[i] = std::fabs(b[i]);
    reference::gemm(c.ta, c.tb, c.m, c.n, c.k, std::fabs(c.alpha), abs_a.data(), lda, abs_b.data(), ldb, 0.0f,
                    rm.data(), c.n);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j)
        t[at(i, j)] = 1e-5f * (1.0f + rm[i * c.n + j] + std::fabs(c.beta * c0[at(i, j)]) + 2.0f);
    return t;
  }

  std::vector<float> run(const GemmKernel& kernel, int threads, GemmPacked packed) const {
    PackedMatrix pa, pb;
    const bool pack_a = packed == GemmPacked::kA || packed == GemmPacked::kBoth;
    const bool pack_b = packed == GemmPacked::kB || packed == GemmPacked::kBoth;
    if (pack_a) pa = PackedMatrix::pack_a(kernel, a.data(), lda, c.ta, c.m, c.k, c.kc);
    if (pack_b) pb = PackedMatrix::pack_b(kernel, b.data(), ldb, c.tb, c.k, c.n, c.kc);
    const GemmOperand op_a = pack_a ? GemmOperand(pa) : GemmOperand(a.data(), lda, c.ta);
    const GemmOperand op_b = pack_b ? GemmOperand(pb) : GemmOperand(b.data(), ldb, c.tb);
    const int64_t kc = packed == GemmPacked::kNone ? 0 : c.kc;
    std::vector<float> workspace(kernels::gemm_workspace_bytes(kernel, c.m, c.n, c.k, threads, packed, kc) / 4);
    GemmEpilogue ep;
    ep.bias_kind = c.bias;
    ep.bias = c.bias == GemmBias::kNone ? nullptr : bias.data();
    ep.activation = activation_of(c.act);
    ep.transposed_c = c.tc;
    ep.addend = c.addend ? addend.data() : nullptr;
    std::vector<float> y = c0;
    kernels::gemm(c.m, c.n, c.k, c.alpha, op_a, op_b, c.beta, y.data(), ldc, ep, workspace, threads, kernel);
    return y;
  }
};

// Checks the valid part of C against the reference and that the padding is untouched.
void expect_matches(const Operands& o, const std::vector<float>& got, const std::string& what) {
  const std::vector<float> want = o.expected(), tol = o.tolerance();
  int64_t bad = 0;
  for (int64_t l = 0; l < o.lines(); ++l)
    for (int64_t p = 0; p < o.ldc; ++p) {
      const int64_t e = l * o.ldc + p;
      const bool valid = p < o.line_length();
      const bool ok = valid ? std::fabs(got[e] - want[e]) <= tol[e] : got[e] == o.c0[e];
      if (!ok && bad++ < 3)
        ADD_FAILURE() << what << ": stored C line " << l << " element " << p << " = " << got[e] << ", want "
                      << (valid ? want[e] : o.c0[e]);
    }
  EXPECT_EQ(bad, 0) << what;
}

std::vector<const GemmKernel*> kernels_under_test() {
  std::vector<const GemmKernel*> kernels;
  for (Isa isa : isas_under_test()) kernels.push_back(kernels::gemm_kernel_for(isa));
  return kernels;
}

// Sizes around the tiles (4x8, 6x16 and its 6x8 edge tile), the blocks (mc 128..168, kc 256, nc ~4k) and 1.
std::vector<Case> edge_cases() {
  std::vector<Case> cases;
  for (int64_t m : {1, 2, 5, 6, 7, 13, 25, 170})
    for (int64_t n : {1, 7, 8, 16, 17, 24, 33, 50})
      for (int64_t k : {1, 3, 16, 257}) cases.push_back({m, n, k});
  cases.push_back({3, 4200, 20});  // N beyond nc
  cases.push_back({9, 40, 600});   // three k-blocks
  return cases;
}

TEST(GemmKernel, OnePerRunnableTarget) {
  EXPECT_EQ(kernels::active_gemm_kernel().isa, active_isa());
  EXPECT_NE(kernels::gemm_kernel_for(Isa::kScalar), nullptr);
  const auto cpu = xsimd::available_architectures();
  EXPECT_EQ(kernels::gemm_kernel_for(Isa::kAvx2) != nullptr, bool(cpu.fma3_avx2));
  EXPECT_EQ(kernels::gemm_kernel_for(Isa::kAvx512) != nullptr, bool(cpu.avx512f));
  for (const GemmKernel* kn : kernels_under_test()) std::cout << "[ under test ] " << kn->name << "\n";
}

TEST(GemmKernel, EdgeShapesMatchReference) {
  for (const GemmKernel* kn : kernels_under_test())
    for (const Case& c : edge_cases()) {
      Operands o(c);
      expect_matches(o, o.run(*kn, 1, GemmPacked::kNone), fmt::format("{} {}", kn->name, describe(c)));
    }
}

TEST(GemmKernel, TransposesAlphaBetaAndLeadingDimensions) {
  for (const GemmKernel* kn : kernels_under_test())
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (float beta : {0.0f, 1.0f, -0.5f})
          for (const Case& shape : {Case{7, 19, 5}, Case{31, 45, 300}, Case{1, 3, 1}}) {
            Case c = shape;
            c.ta = ta;
            c.tb = tb;
            c.alpha = 1.5f;
            c.beta = beta;
            c.pad = 3;
            Operands o(c);
            expect_matches(o, o.run(*kn, 1, GemmPacked::kNone), fmt::format("{} {}", kn->name, describe(c)));
          }
}

TEST(GemmKernel, EpilogueBiasAndActivation) {
  for (const GemmKernel* kn : kernels_under_test())
    for (GemmBias bias : {GemmBias::kNone, GemmBias::kPerRow, GemmBias::kPerColumn})
      for (ActivationKind act :
           {ActivationKind::kNone, ActivationKind::kRelu, ActivationKind::kClip, ActivationKind::kLeakyRelu,
            ActivationKind::kSigmoid, ActivationKind::kHardSigmoid, ActivationKind::kHardSwish, ActivationKind::kSwish})
        for (const Case& shape : {Case{13, 37, 9}, Case{8, 64, 520}}) {
          Case c = shape;
          c.bias = bias;
          c.act = act;
          c.beta = 0.5f;  // the epilogue follows beta * C, on the last k-block only
          c.pad = 1;
          Operands o(c);
          expect_matches(o, o.run(*kn, 1, GemmPacked::kNone), fmt::format("{} {}", kn->name, describe(c)));
        }
}

// C stored transposed (a pointwise convolution computing pixels as rows): every edge tile,
// wide few-row tiles, several k-blocks (beta reads C back), the epilogue, both threads.
TEST(GemmKernel, TransposedCMatchesReference) {
  for (const GemmKernel* kn : kernels_under_test())
    for (int64_t m : {1, 2, 3, 5, 12, 13, 49, 170})
      for (int64_t n : {1, 7, 16, 17, 33, 64})
        for (int64_t k : {1, 16, 600}) {
          Case c{m, n, k};
          c.tc = true;
          c.tb = true;
          c.pad = 2;
          c.beta = k == 16 ? 0.5f : 0.0f;
          c.bias = m % 2 ? GemmBias::kPerColumn : GemmBias::kPerRow;
          c.act = n % 2 ? ActivationKind::kHardSwish : ActivationKind::kClip;
          for (int64_t kc : {int64_t{0}, k}) {  // the kernel's blocking, and one block as ConvGemm packs it
            c.kc = kc;
            Operands o(c);
            for (int threads : {1, 2})
              for (GemmPacked packed : {GemmPacked::kNone, GemmPacked::kB})
                expect_matches(o, o.run(*kn, threads, packed),
                               fmt::format("{} {} threads={} packed={}", kn->name, describe(c), threads, int(packed)));
          }
        }
}

// A packed operand's own K blocking (one block, or blocks far smaller than the kernel's)
// is the call's: with A, B or both packed (the plain one packed per call in the same
// blocks), with beta read once, each element matches the reference.
TEST(GemmKernel, PackedOperandsCarryTheirKBlocking) {
  for (const GemmKernel* kn : kernels_under_test())
    for (int64_t kc : {int64_t{7}, int64_t{600}}) {
      Case c{29, 45, 600};
      c.kc = kc;
      c.beta = 0.5f;
      c.bias = GemmBias::kPerRow;
      Operands o(c);
      for (GemmPacked packed : {GemmPacked::kA, GemmPacked::kB, GemmPacked::kBoth})
        expect_matches(o, o.run(*kn, 2, packed), fmt::format("{} {} packed={}", kn->name, describe(c), int(packed)));
    }
}

// The addend (a residual summed into a convolution's output) in both C layouts, on every
// edge tile, the wide few-row tiles and with several k-blocks (added once, on the last).
TEST(GemmKernel, AddendIsAddedBeforeTheActivation) {
  for (const GemmKernel* kn : kernels_under_test())
    for (bool tc : {false, true})
      for (int64_t m : {1, 3, 13, 49})
        for (int64_t n : {1, 17, 64})
          for (int64_t k : {5, 600}) {
            Case c{m, n, k};
            c.tc = tc;
            c.addend = true;
            c.pad = 3;
            c.beta = k == 5 ? 0.5f : 0.0f;
            c.bias = GemmBias::kPerRow;
            c.act = ActivationKind::kRelu;
            Operands o(c);
            for (int threads : {1, 2})
              expect_matches(o, o.run(*kn, threads, GemmPacked::kNone),
                             fmt::format("{} {} addend threads={}", kn->name, describe(c), threads));
          }
  Case c{3, 5, 0};  // K = 0: the epilogue alone
  c.addend = true;
  c.bias = GemmBias::kPerColumn;
  Operands o(c);
  const std::vector<float> y = o.run(kernels::active_gemm_kernel(), 1, GemmPacked::kNone);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) EXPECT_FLOAT_EQ(y[o.at(i, j)], o.bias[j] + o.addend[o.at(i, j)]);
}

TEST(GemmKernel, PackedOperandsGiveTheSameBits) {
  for (const GemmKernel* kn : kernels_under_test())
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const Case& shape : {Case{23, 41, 300}, Case{6, 16, 1}, Case{200, 70, 40}}) {
          Case c = shape;
          c.ta = ta;
          c.tb = tb;
          c.beta = 1.0f;
          c.pad = 2;
          c.bias = GemmBias::kPerRow;
          c.act = ActivationKind::kRelu;
          Operands o(c);
          const std::vector<float> plain = o.run(*kn, 1, GemmPacked::kNone);
          expect_matches(o, plain, fmt::format("{} {}", kn->name, describe(c)));
          for (GemmPacked packed : {GemmPacked::kA, GemmPacked::kB, GemmPacked::kBoth})
            EXPECT_EQ(o.run(*kn, 1, packed), plain) << kn->name << " packed=" << int(packed) << " " << describe(c);
        }
}

// Blocks of 1..3 rows (an LSTM step or a fully connected layer at small batch: GEMVs)
// run wide tiles, several B panels side by side: 4 panels (64 columns with AVX2) for one
// row, 2 for two or three. Sizes around those groups and the single-panel remainder,
// one and two k-blocks, B plain and packed; each row must also have the same bits as
// when computed inside a 12-row block by the regular tiles.
TEST(GemmKernel, FewRowsMatchReferenceAndTallerBlocks) {
  for (const GemmKernel* kn : kernels_under_test())
    for (int64_t n : {1, 15, 16, 31, 32, 33, 48, 63, 64, 65, 96, 100, 128, 200, 1030})
      for (int64_t k : {1, 7, 256, 300})
        for (GemmPacked packed : {GemmPacked::kNone, GemmPacked::kB}) {
          Case tall{12, n, k};
          tall.tb = true;  // B stored [N, K], as the LSTM's and fully connected weights are
          tall.beta = 1.0f;
          tall.bias = GemmBias::kPerColumn;
          tall.act = ActivationKind::kRelu;
          tall.pad = 1;
          const Operands o(tall);
          const std::vector<float> tall_c = o.run(*kn, 1, packed);
          const PackedMatrix pb = PackedMatrix::pack_b(*kn, o.b.data(), o.ldb, true, k, n);
          for (int64_t m = 1; m <= 4; ++m) {
            const std::string what = fmt::format("{} m={} n={} k={} packed={}", kn->name, m, n, k, int(packed));
            // Rows [m, 2m) of the same operands, as their own GEMM.
            std::vector<float> y(o.c0.begin() + m * o.ldc, o.c0.begin() + 2 * m * o.ldc);
            std::vector<float> ws(kernels::gemm_workspace_bytes(*kn, m, n, k, 1, packed) / 4);
            GemmEpilogue ep;
            ep.bias_kind = GemmBias::kPerColumn;
            ep.bias = o.bias.data();
            ep.activation = activation_of(ActivationKind::kRelu);
            const GemmOperand b = packed == GemmPacked::kB ? GemmOperand(pb) : GemmOperand(o.b.data(), o.ldb, true);
            kernels::gemm(m, n, k, 1.0f, GemmOperand(o.a.data() + m * o.lda, o.lda), b, 1.0f, y.data(), o.ldc, ep, ws,
                          1, *kn);
            EXPECT_TRUE(std::equal(y.begin(), y.end(), tall_c.begin() + m * o.ldc)) << what;
          }
          expect_matches(o, tall_c, fmt::format("{} {}", kn->name, describe(tall)));
        }
}

// Shapes big enough to be split (by rows, by columns, or beyond one block per thread):
// two threads must reproduce one thread's bits exactly.
TEST(GemmKernel, TwoThreadsGiveTheSameBitsAsOne) {
  for (const GemmKernel* kn : kernels_under_test())
    for (const Case& shape : {Case{64, 1000, 300}, Case{1000, 20, 300}, Case{129, 130, 131}, Case{300, 4500, 40},
                              Case{5, 3000, 600}, Case{1, 3000, 300}, Case{3, 1030, 257}}) {
      for (GemmPacked packed : {GemmPacked::kNone, GemmPacked::kA, GemmPacked::kB}) {
        Case c = shape;
        c.bias = GemmBias::kPerColumn;
        c.act = ActivationKind::kClip;
        c.beta = 0.25f;
        Operands o(c);
        const std::vector<float> one = o.run(*kn, 1, packed);
        const std::vector<float> two = o.run(*kn, 2, packed);
        EXPECT_EQ(two, one) << kn->name << " packed=" << int(packed) << " " << describe(c);
        if (packed == GemmPacked::kNone) expect_matches(o, two, fmt::format("{} {} 2 threads", kn->name, describe(c)));
      }
    }
}

TEST(GemmKernel, WorkspaceForTwoThreadsExceedsOneWhenSplit) {
  const GemmKernel& kn = kernels::active_gemm_kernel();
  const int64_t one = kernels::gemm_workspace_bytes(kn, 500, 500, 500, 1, GemmPacked::kNone);
  EXPECT_GT(one, 0);
  EXPECT_EQ(kernels::gemm_workspace_bytes(kn, 500, 500, 500, 2, GemmPacked::kNone), 2 * one);
  // Too little work to split: one thread's scratch.
  EXPECT_EQ(kernels::gemm_workspace_bytes(kn, 4, 4, 4, 2, GemmPacked::kNone),
            kernels::gemm_workspace_bytes(kn, 4, 4, 4, 1, GemmPacked::kNone));
  EXPECT_EQ(kernels::gemm_workspace_bytes(kn, 500, 500, 500, 2, GemmPacked::kBoth), 0);
}

TEST(GemmKernel, SmallerWorkspaceRunsFewerThreadsNotFewerElements) {
  Case c{300, 300, 300};
  Operands o(c);
  const GemmKernel& kn = kernels::active_gemm_kernel();
  std::vector<float> workspace(kernels::gemm_workspace_bytes(kn, c.m, c.n, c.k, 1, GemmPacked::kNone) / 4);
  std::vector<float> y = o.c0;
  kernels::gemm(c.m, c.n, c.k, 1.0f, GemmOperand(o.a.data(), o.lda), GemmOperand(o.b.data(), o.ldb), 0.0f, y.data(),
                o.ldc, {}, workspace, 2, kn);
  EXPECT_EQ(y, o.run(kn, 1, GemmPacked::kNone));
  std::vector<float> none;
  EXPECT_THROW(kernels::gemm(c.m, c.n, c.k, 1.0f, GemmOperand(o.a.data(), o.lda), GemmOperand(o.b.data(), o.ldb), 0.0f,
                             y.data(), o.ldc, {}, none, 1, kn),
               std::invalid_argument);
}

TEST(GemmKernel, BetaZeroIgnoresNaNInC) {
  for (const GemmKernel* kn : kernels_under_test()) {
    Case c{7, 20, 5};
    Operands o(c);
    std::fill(o.c0.begin(), o.c0.end(), std::numeric_limits<float>::quiet_NaN());
    const std::vector<float> y = o.run(*kn, 1, GemmPacked::kNone);
    for (int64_t i = 0; i < c.m * c.n; ++i) ASSERT_FALSE(std::isnan(y[i])) << kn->name;
  }
}

TEST(GemmKernel, KZeroScalesCAndAppliesTheEpilogue) {
  for (bool tc : {false, true}) {
    Case c{3, 5, 0};
    c.beta = 2.0f;
    c.bias = GemmBias::kPerColumn;
    c.act = ActivationKind::kRelu;
    c.tc = tc;
    Operands o(c);
    const std::vector<float> y = o.run(kernels::active_gemm_kernel(), 1, GemmPacked::kNone);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j)
        EXPECT_FLOAT_EQ(y[o.at(i, j)], std::max(0.0f, 2.0f * o.c0[o.at(i, j)] + o.bias[j])) << "tc " << tc;
  }
}

TEST(GemmKernel, RejectsPackedOperandsOfTheWrongShapeOrSide) {
  const GemmKernel& kn = kernels::active_gemm_kernel();
  std::vector<float> a(6, 1.0f), y(9);
  PackedMatrix pa = PackedMatrix::pack_a(kn, a.data(), 2, false, 3, 2);  // [3, 2]
  const GemmOperand plain(a.data(), 3);
  // Enough workspace for any of these calls, so only the packed operand can be at fault.
  std::vector<float> ws(kernels::gemm_workspace_bytes(kn, 3, 3, 3, 1, GemmPacked::kNone) / 4);
  EXPECT_THROW(kernels::gemm(3, 3, 3, 1.0f, pa, plain, 0.0f, y.data(), 3, {}, ws, 1, kn), std::invalid_argument);
  EXPECT_THROW(kernels::gemm(2, 3, 3, 1.0f, plain, pa, 0.0f, y.data(), 3, {}, ws, 1, kn), std::invalid_argument);
  EXPECT_NO_THROW(kernels::gemm(3, 3, 2, 1.0f, pa, plain, 0.0f, y.data(), 3, {}, ws, 1, kn));
}

TEST(GemmKernel, RejectsOperandsPackedWithDifferentKBlockings) {
  const GemmKernel& kn = kernels::active_gemm_kernel();
  std::vector<float> a(600, 1.0f), b(600, 1.0f), y(1);
  PackedMatrix pa = PackedMatrix::pack_a(kn, a.data(), 600, false, 1, 600, 600);
  PackedMatrix pb = PackedMatrix::pack_b(kn, b.data(), 1, false, 600, 1);
  EXPECT_THROW(kernels::gemm(1, 1, 600, 1.0f, pa, pb, 0.0f, y.data(), 1, {}, {}, 1, kn), std::invalid_argument);
}

TEST(GemmKernel, RejectsOperandsPackedForDifferentKernels) {
  const auto runnable = runnable_isas();
  if (runnable.size() < 2) GTEST_SKIP() << "one kernel only on this CPU";
  std::vector<float> a(4, 1.0f), b(4, 1.0f), y(4);
  PackedMatrix pa = PackedMatrix::pack_a(*kernels::gemm_kernel_for(runnable[0]), a.data(), 2, false, 2, 2);
  PackedMatrix pb = PackedMatrix::pack_b(*kernels::gemm_kernel_for(runnable[1]), b.data(), 2, false, 2, 2);
  EXPECT_THROW(
      kernels::gemm(2, 2, 2, 1.0f, pa, pb, 0.0f, y.data(), 2, {}, {}, 1, *kernels::gemm_kernel_for(runnable[0])),
      std::invalid_argument);
}

}  // namespace
}  // namespace minfer::test
