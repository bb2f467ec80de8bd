// The vector activations of every target under test (isas_under_test()) against their definitions
// in double precision, over ordinary and extreme arguments and lengths around the
// vector width (the tail goes through a padded vector).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "ops/kernels/vector_activations.h"
#include "tests/isa_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

using kernels::VectorActivations;

std::vector<const VectorActivations*> sets_under_test() {
  std::vector<const VectorActivations*> sets;
  for (Isa isa : isas_under_test()) sets.push_back(kernels::vector_activations_for(isa));
  return sets;
}

std::vector<float> arguments() {
  std::vector<float> x = random_values(200, 7, -12.0f, 12.0f);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-4f, 0.624f, 0.625f, 0.626f, -0.625f, 5.0f, 20.0f, 40.0f, 87.0f,
                  88.5f, 89.0f, 100.0f, 1e30f})
    for (float sign : {1.0f, -1.0f}) x.push_back(sign * v);
  return x;
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// Within 2 millionths of the value (a few float ulps) or 1e-37 absolute (subnormals).
void expect_close(float got, double want, float x, const char* what) {
  EXPECT_LE(std::fabs(got - want), std::max(2e-6 * std::fabs(want), 1e-37)) << what << "(" << x << ")";
}

TEST(VectorActivations, MatchDefinitions) {
  const std::vector<float> x = arguments();
  for (const VectorActivations* v : sets_under_test()) {
    SCOPED_TRACE(v->name);
    std::vector<float> s = x, t = x;
    v->sigmoid(s.data(), static_cast<int64_t>(s.size()));
    v->tanh(t.data(), static_cast<int64_t>(t.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      expect_close(s[i], sigmoid(x[i]), x[i], "sigmoid");
      expect_close(t[i], std::tanh(double(x[i])), x[i], "tanh");
    }
  }
}

double clamp01(double v) {
  return std::min(1.0, std::max(0.0, v));
}

// Within 2^-21 (a few ulps of 1) times (1 + |x|): alpha x + beta loses absolute, not
// relative, precision where it nears 0.
void expect_close_abs(float got, double want, float x, const char* what) {
  EXPECT_LE(std::fabs(got - want), std::ldexp(1.0, -21) * (1 + std::fabs(double(x)))) << what << "(" << x << ")";
}

TEST(VectorActivations, HardSigmoidHardSwishSwishMatchDefinitions) {
  const std::vector<float> x = arguments();
  const auto n = static_cast<int64_t>(x.size());
  for (const VectorActivations* v : sets_under_test()) {
    SCOPED_TRACE(v->name);
    std::vector<float> hs = x, hw = x, s1 = x, s2 = x;
    v->hard_sigmoid(hs.data(), n, 0.2f, 0.5f);
    v->hard_swish(hw.data(), n);
    v->swish(s1.data(), n, 1.0f);
    v->swish(s2.data(), n, 0.5f);
    for (size_t i = 0; i < x.size(); ++i) {
      const double xi = x[i];
      expect_close_abs(hs[i], clamp01(double(0.2f) * xi + 0.5), x[i], "hard_sigmoid");
      expect_close_abs(hw[i], xi * clamp01(xi / 6 + 0.5), x[i], "hard_swish");
      // Relative 2e-6, or 1e-35 absolute where e^-x overflows float and the result is
      // 0 instead of a few 1e-37.
      for (auto [got, alpha] : {std::pair{s1[i], 1.0}, std::pair{s2[i], 0.5}})
        EXPECT_LE(std::fabs(got - xi * sigmoid(alpha * xi)),
                  std::max(2e-6 * std::fabs(xi * sigmoid(alpha * xi)), 1e-35))
            << "swish(" << x[i] << ", " << alpha << ")";
    }
  }
}

TEST(VectorActivations, InfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const VectorActivations* v : sets_under_test()) {
    SCOPED_TRACE(v->name);
    std::vector<float> s = {inf, -inf, nan}, t = s;
    v->sigmoid(s.data(), 3);
    v->tanh(t.data(), 3);
    EXPECT_EQ(s[0], 1.0f);
    EXPECT_EQ(s[1], 0.0f);
    EXPECT_TRUE(std::isnan(s[2]));
    EXPECT_EQ(t[0], 1.0f);
    EXPECT_EQ(t[1], -1.0f);
    EXPECT_TRUE(std::isnan(t[2]));
    // The hard ones keep a NaN (a vector max or min would return the bound); swish of
    // -inf is NaN like -inf * sigmoid(-inf) = -inf * 0, the graph it replaces.
    std::vector<float> hs = {inf, -inf, nan}, hw = hs, sw = hs;
    v->hard_sigmoid(hs.data(), 3, 0.2f, 0.5f);
    v->hard_swish(hw.data(), 3);
    v->swish(sw.data(), 3, 1.0f);
    EXPECT_EQ(hs[0], 1.0f);
    EXPECT_EQ(hs[1], 0.0f);
    EXPECT_TRUE(std::isnan(hs[2]));
    EXPECT_EQ(hw[0], inf);
    EXPECT_TRUE(std::isnan(hw[1]));  // -inf * 0
    EXPECT_TRUE(std::isnan(hw[2]));
    EXPECT_EQ(sw[0], inf);
    EXPECT_TRUE(std::isnan(sw[1]));
    EXPECT_TRUE(std::isnan(sw[2]));
  }
}

// Every 257th float bit pattern (16.7 million arguments of every sign and exponent,
// subnormals and NaNs among them) against the definitions in double: Sigmoid and Swish
// within 5e-7 relative (4 float ulps; 1.7e-7 measured on AVX2 and AVX-512), or absolutely where the result is below
// float's normal range (2e-38 for Sigmoid, 2e-36 for Swish, which is 0 there); the hard ones as above; a NaN argument
// gives NaN.
TEST(VectorActivations, EveryFloat257thBitPattern) {
  constexpr int64_t kChunk = 1 << 16;
  for (const VectorActivations* v : sets_under_test()) {
    SCOPED_TRACE(v->name);
    int64_t bad = 0;
    auto expect = [&bad](bool ok, const char* what, float x, float got, double want) {
      if (!ok && bad++ < 5) ADD_FAILURE() << what << "(" << x << ") = " << got << ", want " << want;
    };
    std::vector<float> x, s, sw, hs, hw;
    for (uint64_t bits = 0; bits <= 0xffffffffu;) {
      x.clear();
      for (; bits <= 0xffffffffu && static_cast<int64_t>(x.size()) < kChunk; bits += 257) {
        const auto b = static_cast<uint32_t>(bits);
        float f;
        std::memcpy(&f, &b, sizeof f);
        if (!std::isinf(f)) x.push_back(f);  // the infinities: InfinitiesAndNaN
      }
      s = sw = hs = hw = x;
      const auto n = static_cast<int64_t>(x.size());
      v->sigmoid(s.data(), n);
      v->swish(sw.data(), n, 1.0f);
      v->hard_sigmoid(hs.data(), n, 0.2f, 0.5f);
      v->hard_swish(hw.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const float xi = x[i];
        if (std::isnan(xi)) {
          for (float got : {s[i], sw[i], hs[i], hw[i]}) expect(std::isnan(got), "NaN in, NaN out", xi, got, 0);
          continue;
        }
        const double d = xi, sig = sigmoid(d), swi = d * sig;
        expect(std::fabs(s[i] - sig) <= std::max(5e-7 * sig, 2e-38), "sigmoid", xi, s[i], sig);
        expect(std::fabs(sw[i] - swi) <= std::max(5e-7 * std::fabs(swi), 2e-36), "swish", xi, sw[i], swi);
        const double tol = std::ldexp(1.0, -21) * (1 + std::fabs(d));
        expect(std::fabs(hs[i] - clamp01(double(0.2f) * d + 0.5)) <= tol, "hard_sigmoid", xi, hs[i], 0);
        expect(std::fabs(hw[i] - d * clamp01(d / 6 + 0.5)) <= tol, "hard_swish", xi, hw[i], 0);
      }
    }
    EXPECT_EQ(bad, 0);
  }
}

// An element's result does not depend on the array's length or its place in it, and
// nothing past n is written: lengths around one and two vectors of every width (1, 8, 16).
TEST(VectorActivations, TailsAreComputedLikeFullVectors) {
  const std::vector<float> x = random_values(40, 3, -6.0f, 6.0f);
  for (const VectorActivations* v : sets_under_test())
    for (std::function<void(float*, int64_t)> f :
         {std::function<void(float*, int64_t)>(v->sigmoid), std::function<void(float*, int64_t)>(v->tanh),
          std::function<void(float*, int64_t)>(v->hard_swish),
          std::function<void(float*, int64_t)>([v](float*y, int64_t n) { v->hard_sigmoid(y, n, 0.2f, 0.5f); }),
          std::function<void(float*, int64_t)>([v](float*y, int64_t n) { v->swish(y, n, 1.0f); })}) {
      std::vector<float> whole = x;
      f(whole.data(), 40);
      for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 39}) {
        std::vector<float> part = x;
        f(part.data(), n);
        for (int64_t i = 0; i < 40; ++i)
          ASSERT_EQ(part[i], i < n ? whole[i] : x[i]) << v->name << " n=" << n << " i=" << i;
      }
    }
}

// Extreme arguments in the tail as well as in full vectors.
TEST(VectorActivations, ExtremesInTails) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {-inf, -1e30f, -100.0f, -88.5f, 0.0f, 88.5f, 100.0f, 1e30f, inf};
  for (const VectorActivations* v : sets_under_test())
    for (int64_t offset : {0, 5, 11}) {
      SCOPED_TRACE(fmt::format("{} offset {}", v->name, offset));
      std::vector<float> s(offset, 0.5f), t;
      s.insert(s.end(), x.begin(), x.end());
      t = s;
      v->sigmoid(s.data(), static_cast<int64_t>(s.size()));
      v->tanh(t.data(), static_cast<int64_t>(t.size()));
      for (size_t i = 0; i < x.size(); ++i) {
        expect_close(s[offset + i], sigmoid(x[i]), x[i], "sigmoid");
        expect_close(t[offset + i], std::tanh(double(x[i])), x[i], "tanh");
      }
    }
}

TEST(VectorActivations, OneSetPerRunnableTarget) {
  EXPECT_EQ(kernels::active_vector_activations().isa, active_isa());
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    const VectorActivations* v = kernels::vector_activations_for(isa);
    ASSERT_EQ(v != nullptr, isa_runnable(isa)) << isa_name(isa);
    if (!v) continue;
    EXPECT_EQ(v->isa, isa);
    EXPECT_EQ(std::string(v->name), std::string("vector_activations_") + isa_name(isa));
  }
}

}  // namespace
}  // namespace minfer::test
