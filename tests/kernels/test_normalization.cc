// The normalisation kernels of every target under test (InstanceNormalization's planes,
// LRN's channel windows) against double-precision loops written here from the ONNX
// definitions: plane and pixel counts around the vector widths and the tiles, planes far
// from zero and nearly constant, every LRN window size up to more than the channels, each
// power LRN special-cases and a general one, thread counts (the bits must not move).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/kernels/normalization.h"
#include "tests/isa_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

const kernels::NormalizationKernels& kernels_for(Isa isa) {
  const kernels::NormalizationKernels* k = kernels::normalization_for(isa);
  if (!k) throw std::runtime_error("no normalization kernels for the target under test");
  return *k;
}

// y = (x - mean) / sqrt(var + eps) * scale[c] + bias[c] per (n, c) plane, in double.
std::vector<double> naive_instance_norm(const std::vector<float>& x, int64_t batch, int64_t channels, int64_t n,
                                        const std::vector<float>& scale, const std::vector<float>& bias, double eps) {
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c) {
      const size_t at = static_cast<size_t>((b * channels + c) * n);
      double sum = 0.0;
      for (int64_t i = 0; i < n; ++i) sum += x[at + i];
      const double mean = sum / static_cast<double>(n);
      double var = 0.0;
      for (int64_t i = 0; i < n; ++i) var += (x[at + i] - mean) * (x[at + i] - mean);
      var /= static_cast<double>(n);
      for (int64_t i = 0; i < n; ++i) y[at + i] = (x[at + i] - mean) / std::sqrt(var + eps) * scale[c] + bias[c];
    }
  return y;
}

// Float's rounding of a few operations on values of y's size: 2e-6 of 1 + |y|.
void expect_near_all(const std::vector<float>& y, const std::vector<double>& want, double tolerance) {
  ASSERT_EQ(y.size(), want.size());
  int reported = 0;
  for (size_t i = 0; i < y.size(); ++i)
    if (!(std::fabs(y[i] - want[i]) <= tolerance * (1.0 + std::fabs(want[i]))) && reported++ < 5)
      ADD_FAILURE() << "element " << i << ": " << y[i] << ", want " << want[i];
}

TEST(InstanceNormKernel, MatchesDoubleLoop) {
  for (Isa isa : isas_under_test())
    for (int64_t n : {1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 196, 3136, 12544})
      for (double eps : {1e-5, 1e-2}) {
        SCOPED_TRACE(testing::Message() << isa_name(isa) << " n=" << n << " eps=" << eps);
        const int64_t batch = 2, channels = 3;
        std::vector<float> x = random_values(batch * channels * n, static_cast<uint32_t>(n), -2.0f, 2.0f);
        for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(n + i)] += 1000.0f;  // plane 1 far from zero
        const auto scale = random_values(channels, 5, 0.5f, 1.5f), bias = random_values(channels, 6);
        std::vector<float> y(x.size(), -7.0f);
        kernels::instance_norm(kernels_for(isa), x.data(), batch, channels, n, scale.data(), bias.data(),
                               static_cast<float>(eps), y.data(), 1);
        expect_near_all(y, naive_instance_norm(x, batch, channels, n, scale, bias, static_cast<float>(eps)), 2e-6);
      }
}

// A plane whose spread is far below epsilon: epsilon, not the variance, sets the scale;
// a constant plane gives its bias exactly.
TEST(InstanceNormKernel, EpsilonDominatesNearlyConstantPlanes) {
  for (Isa isa : isas_under_test()) {
    SCOPED_TRACE(isa_name(isa));
    const int64_t n = 100;
    std::vector<float> x = random_values(2 * n, 9, -1e-4f, 1e-4f);
    for (int64_t i = 0; i < n; ++i) {
      x[static_cast<size_t>(i)] += 3.0f;
      x[static_cast<size_t>(n + i)] = -5.5f;
    }
    const std::vector<float> scale = {2.0f, 2.0f}, bias = {0.25f, 0.75f};
    std::vector<float> y(x.size());
    kernels::instance_norm(kernels_for(isa), x.data(), 1, 2, n, scale.data(), bias.data(), 1e-3f, y.data(), 1);
    expect_near_all(y, naive_instance_norm(x, 1, 2, n, scale, bias, 1e-3f), 2e-6);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[static_cast<size_t>(n + i)], 0.75f) << i;
  }
}

// In place (y = x) and on 1 or 2 threads: the same bits.
TEST(InstanceNormKernel, InPlaceAndThreadsGiveTheSameBits) {
  for (Isa isa : isas_under_test()) {
    SCOPED_TRACE(isa_name(isa));
    const int64_t batch = 3, channels = 5, n = 1000;
    const auto x = random_values(batch * channels * n, 11, -3.0f, 3.0f);
    const auto scale = random_values(channels, 12), bias = random_values(channels, 13);
    std::vector<float> one(x.size()), two(x.size()), in_place = x;
    const auto& k = kernels_for(isa);
    kernels::instance_norm(k, x.data(), batch, channels, n, scale.data(), bias.data(), 1e-5f, one.data(), 1);
    kernels::instance_norm(k, x.data(), batch, channels, n, scale.data(), bias.data(), 1e-5f, two.data(), 2);
    kernels::instance_norm(k, in_place.data(), batch, channels, n, scale.data(), bias.data(), 1e-5f, in_place.data(),
                           2);
    EXPECT_EQ(one, two);
    EXPECT_EQ(one, in_place);
  }
}

struct LrnAttrs {
  int64_t size;
  double alpha, beta, bias;
};

// y = x / (bias + alpha / size * sum of x[i]^2 over [c - floor((size-1)/2), c +
// ceil((size-1)/2)])^beta, the window clipped to the channels; in double.
std::vector<double> naive_lrn(const std::vector<float>& x, int64_t batch, int64_t channels, int64_t plane,
                              const LrnAttrs& a) {
  std::vector<double> y(x.size());
  const auto before = static_cast<int64_t>(std::floor((a.size - 1) / 2.0));
  const auto after = static_cast<int64_t>(std::ceil((a.size - 1) / 2.0));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < plane; ++p) {
        double sum = 0.0;
        for (int64_t i = std::max<int64_t>(0, c - before); i <= std::min(channels - 1, c + after); ++i) {
          const double v = x[static_cast<size_t>((b * channels + i) * plane + p)];
          sum += v * v;
        }
        const size_t at = static_cast<size_t>((b * channels + c) * plane + p);
        y[at] = x[at] / std::pow(a.bias + a.alpha / static_cast<double>(a.size) * sum, a.beta);
      }
  return y;
}

std::vector<float> run_lrn(Isa isa, const std::vector<float>& x, int64_t batch, int64_t channels, int64_t plane,
                           const LrnAttrs& a, int threads) {
  std::vector<float> y(x.size(), -7.0f);
  kernels::lrn(kernels_for(isa), x.data(), batch, channels, plane, kernels::lrn_params(a.size, a.alpha, a.beta, a.bias),
               y.data(), threads);
  return y;
}

// Every window size from 1 to past the channels (odd and even: the window's extra channel
// goes after), alpha large enough that the window's sum, not the bias, sets the result.
TEST(LrnKernel, MatchesDoubleLoopForEveryWindow) {
  for (Isa isa : isas_under_test())
    for (int64_t size = 1; size <= 9; ++size)
      for (int64_t plane : {1, 5, 16, 33, 99, 300}) {
        SCOPED_TRACE(testing::Message() << isa_name(isa) << " size=" << size << " plane=" << plane);
        const int64_t batch = 2, channels = 7;
        const auto x = random_values(batch * channels * plane, static_cast<uint32_t>(size * 1000 + plane), -2.0f, 2.0f);
        const LrnAttrs a{size, 2.0, 0.75, 1.0};
        expect_near_all(run_lrn(isa, x, batch, channels, plane, a, 1), naive_lrn(x, batch, channels, plane, a), 2e-6);
      }
}

// The powers LRN special-cases (0, 1/2, 3/4, 1), others by exp and log, AlexNet's and
// ONNX's defaults, a negative base (bias below 0: pow's sign for an integer power, NaN
// otherwise, as the loop's std::pow).
TEST(LrnKernel, MatchesDoubleLoopForEveryPower) {
  const LrnAttrs cases[] = {{5, 1e-4, 0.75, 2.0}, {3, 1e-4, 0.75, 1.0}, {3, 0.5, 0.5, 2.0},  {4, 1.5, 1.0, 0.5},
                            {5, 3.0, 0.0, 1.0},   {3, 0.7, 0.3, 1.5},   {2, 2.0, 2.0, 1.0},  {5, 1.0, -0.4, 0.25},
                            {3, 0.1, 1.0, -3.0},  {3, 0.1, 2.0, -3.0},  {3, 0.1, 3.0, -3.0}, {3, 0.1, 0.75, -3.0},
                            {3, 0.1, 0.6, -3.0}};
  for (Isa isa : isas_under_test())
    for (const LrnAttrs& a : cases) {
      SCOPED_TRACE(testing::Message() << isa_name(isa) << " size=" << a.size << " alpha=" << a.alpha
                                      << " beta=" << a.beta << " bias=" << a.bias);
      const int64_t batch = 1, channels = 6, plane = 70;
      const auto x = random_values(batch * channels * plane, 21, -3.0f, 3.0f);
      const auto y = run_lrn(isa, x, batch, channels, plane, a, 1);
      const auto want = naive_lrn(x, batch, channels, plane, a);
      int reported = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        const bool ok =
            std::isnan(want[i]) ? std::isnan(y[i]) : std::fabs(y[i] - want[i]) <= 2e-6 * (1 + std::fabs(want[i]));
        if (!ok && reported++ < 5) ADD_FAILURE() << "element " << i << ": " << y[i] << ", want " << want[i];
      }
    }
}

// A general power of bases up to 3e5 (inputs of +-300), where the vector targets' float
// exp and log lose |beta ln base| ulps: still within 2e-6 relative (y is large here).
TEST(LrnKernel, GeneralPowerOfLargeBases) {
  for (Isa isa : isas_under_test()) {
    SCOPED_TRACE(isa_name(isa));
    const int64_t batch = 1, channels = 8, plane = 40;
    const auto x = random_values(batch * channels * plane, 41, -300.0f, 300.0f);
    const LrnAttrs a{5, 3.0, -0.7, 1.0};
    expect_near_all(run_lrn(isa, x, batch, channels, plane, a, 1), naive_lrn(x, batch, channels, plane, a), 2e-6);
  }
}

// A batch of images whose planes split in several chunks among threads: 1 and 2 threads
// give the same bits, and match the loop.
TEST(LrnKernel, ThreadsGiveTheSameBits) {
  for (Isa isa : isas_under_test()) {
    SCOPED_TRACE(isa_name(isa));
    const int64_t batch = 2, channels = 12, plane = 27 * 29;
    const auto x = random_values(batch * channels * plane, 31, -4.0f, 4.0f);
    const LrnAttrs a{5, 1.0, 0.75, 2.0};
    const auto one = run_lrn(isa, x, batch, channels, plane, a, 1);
    EXPECT_EQ(one, run_lrn(isa, x, batch, channels, plane, a, 2));
    expect_near_all(one, naive_lrn(x, batch, channels, plane, a), 2e-6);
  }
}

}  // namespace
}  // namespace minfer::test
