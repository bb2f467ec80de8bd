// The plane means of every target under test against a double-precision loop written
// here: plane sizes around the vector widths and the late layers' 7x7 to 112x112
// planes, values far from zero (where a float sum would lose digits), thread counts,
// infinities and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ops/blocked_layout.h"
#include "ops/kernels/plane_means.h"
#include "tests/isa_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

std::vector<double> naive_means(const std::vector<float>& x, int64_t planes, int64_t n) {
  std::vector<double> means(static_cast<size_t>(planes));
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += x[static_cast<size_t>(p * n + i)];
    means[static_cast<size_t>(p)] = sum / static_cast<double>(n);
  }
  return means;
}

// The double mean rounded to float: within half an ulp of float, plus the double sum's
// own error (n x 2^-53 of the sum of magnitudes, far below it here); 2^-23 relative.
TEST(PlaneMeans, MatchDoubleMeanToFloatPrecision) {
  for (Isa isa : isas_under_test())
    for (int64_t n : {1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 49, 63, 64, 65, 196, 784, 3136, 12544}) {
      SCOPED_TRACE(testing::Message() << isa_name(isa) << " n=" << n);
      const int64_t planes = 5;
      std::vector<float> x = random_values(planes * n, static_cast<uint32_t>(n), -1.0f, 1.0f);
      for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(2 * n + i)] += 1000.0f;  // a plane far from 0
      std::vector<float> y(planes, -7.0f);
      kernels::plane_means(isa, x.data(), planes, n, y.data(), 1);
      const std::vector<double> want = naive_means(x, planes, n);
      for (int64_t p = 0; p < planes; ++p)
        EXPECT_LE(std::fabs(y[p] - want[p]), std::ldexp(std::fabs(want[p]), -23) + 1e-30) << "plane " << p;
    }
}

// The NCHWc means (a global pool reading NCHWc): every channel of every block to the
// double mean's float precision, odd and even pixel counts, 1 and 2 threads alike.
TEST(PlaneMeans, BlockedChannelsMatchDoubleMeans) {
  for (Isa isa : isas_under_test()) {
    const int64_t lanes = blocked_lanes(isa);
    if (!lanes) continue;
    for (int64_t n : {1, 2, 7, 49, 196, 3136}) {
      SCOPED_TRACE(testing::Message() << isa_name(isa) << " n=" << n);
      const int64_t blocks = 5;
      std::vector<float> x = random_values(blocks * n * lanes, static_cast<uint32_t>(n) + 3, -1.0f, 1.0f);
      for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>((2 * n + i) * lanes + 3)] += 1000.0f;  // one far channel
      // The same values plane by plane: channel (b, l) is plane b * lanes + l.
      std::vector<float> planes(x.size());
      for (int64_t b = 0; b < blocks; ++b)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t l = 0; l < lanes; ++l)
            planes[static_cast<size_t>((b * lanes + l) * n + i)] = x[static_cast<size_t>((b * n + i) * lanes + l)];
      const std::vector<double> want = naive_means(planes, blocks * lanes, n);
      std::vector<float> one(static_cast<size_t>(blocks * lanes), -7.0f), two = one;
      kernels::blocked_plane_means(isa, x.data(), blocks, n, one.data(), 1);
      kernels::blocked_plane_means(isa, x.data(), blocks, n, two.data(), 2);
      EXPECT_EQ(one, two);
      for (size_t c = 0; c < want.size(); ++c)
        EXPECT_LE(std::fabs(one[c] - want[c]), std::ldexp(std::fabs(want[c]), -23) + 1e-30) << "channel " << c;
    }
  }
  EXPECT_THROW(kernels::blocked_plane_means(Isa::kScalar, nullptr, 1, 1, nullptr, 1), std::invalid_argument);
}

TEST(PlaneMeans, ThreadCountsGiveTheSameBits) {
  const int64_t planes = 96, n = 56 * 56;
  const std::vector<float> x = random_values(planes * n, 5);
  for (Isa isa : isas_under_test()) {
    std::vector<float> one(planes), two(planes);
    kernels::plane_means(isa, x.data(), planes, n, one.data(), 1);
    kernels::plane_means(isa, x.data(), planes, n, two.data(), 2);
    EXPECT_EQ(one, two) << isa_name(isa);
  }
}

TEST(PlaneMeans, InfinitiesAndNaNPropagate) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t n = 40;  // the special value in a full vector (5) and in the tail (38)
  for (Isa isa : isas_under_test())
    for (int64_t at : {5, 38}) {
      std::vector<float> x(3 * n, 1.0f);
      x[static_cast<size_t>(at)] = inf;
      x[static_cast<size_t>(n + at)] = nan;
      x[static_cast<size_t>(2 * n + at)] = -inf;
      std::vector<float> y(3);
      kernels::plane_means(isa, x.data(), 3, n, y.data(), 1);
      EXPECT_EQ(y[0], inf) << isa_name(isa) << " at " << at;
      EXPECT_TRUE(std::isnan(y[1])) << isa_name(isa) << " at " << at;
      EXPECT_EQ(y[2], -inf) << isa_name(isa) << " at " << at;
    }
}

}  // namespace
}  // namespace minfer::test
