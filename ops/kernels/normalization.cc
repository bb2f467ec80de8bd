// The portable normalisation kernels, the choice among the targets and the threads.
#include "ops/kernels/normalization.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/kernels/normalization_math.h"
#include "ops/kernels/threads.h"

namespace minfer::kernels {
namespace {

void instance_norm_plane_portable(const float* x, int64_t n, float scale, float bias, float epsilon, float* y) {
  if (n == 0) return;
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const double mean = sum / static_cast<double>(n);
  double squares = 0.0;
  for (int64_t i = 0; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
  const PlaneAffine a = plane_affine(mean, squares, n, scale, epsilon);
  for (int64_t i = 0; i < n; ++i) y[i] = ((x[i] - a.mean_hi) - a.mean_lo) * a.factor + bias;
}

// Tiles of kTile pixels through every channel, the window sums moving as in the vector
// targets' (normalization_impl.h).
void lrn_pixels_portable(const float* x, int64_t channels, int64_t plane, int64_t first, int64_t count,
                         const LrnParams& p, float* y) {
  constexpr int64_t kTile = 16;
  for (int64_t start = first; start < first + count; start += kTile) {
    const int64_t t = std::min(kTile, first + count - start);
    double sum[kTile] = {};
    const auto add = [&](int64_t c, double sign) {
      const float* r = x + c * plane + start;
      for (int64_t j = 0; j < t; ++j) sum[j] += sign * (static_cast<double>(r[j]) * r[j]);
    };
    for (int64_t c = 0; c < std::min(p.after, channels); ++c) add(c, 1.0);
    for (int64_t c = 0; c < channels; ++c) {
      if (c + p.after < channels) add(c + p.after, 1.0);
      if (c - p.before - 1 >= 0) add(c - p.before - 1, -1.0);
      const float* r = x + c * plane + start;
      float* out = y + c * plane + start;
      for (int64_t j = 0; j < t; ++j) out[j] = lrn_value(r[j], sum[j], p);
    }
  }
}

// An image's pixels are split in chunks of this many (a multiple of every target's
// tile), so that a batch of one on large planes still gives each thread work.
constexpr int64_t kLrnChunk = 256;

void channel_affine_plane_portable(const float* x, int64_t n, float scale, float shift, const Activation& act,
                                   float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale + shift;
  act.apply(y, n);
}

}  // namespace

constinit const NormalizationKernels normalization_scalar = {"normalization_scalar", Isa::kScalar,
                                                             &instance_norm_plane_portable,
                                                             &channel_affine_plane_portable, &lrn_pixels_portable};

const NormalizationKernels* normalization_for(Isa isa) {
  if (!isa_runnable(isa)) return nullptr;
  return per_isa<const NormalizationKernels*>(isa, &normalization_scalar, &normalization_avx2, &normalization_avx512);
}

const NormalizationKernels& normalization_or_scalar(Isa isa) {
  const NormalizationKernels* found = normalization_for(isa);
  return found ? *found : normalization_scalar;
}

LrnParams lrn_params(int64_t size, double alpha, double beta, double bias) {
  LrnParams p;
  p.before = (size - 1) / 2;
  p.after = size / 2;  // ceil((size - 1) / 2)
  p.alpha_over_size = alpha / static_cast<double>(size);
  p.bias = bias;
  p.beta = beta;
  p.power = beta == 0.0    ? LrnPower::kZero
            : beta == 0.5  ? LrnPower::kHalf
            : beta == 0.75 ? LrnPower::kThreeQuarters
            : beta == 1.0  ? LrnPower::kOne
                           : LrnPower::kGeneral;
  if (std::floor(beta) != beta)
    p.negative_base_factor = std::numeric_limits<double>::quiet_NaN();
  else
    p.negative_base_factor = std::fmod(beta, 2.0) == 0.0 ? 1.0 : -1.0;
  return p;
}

void instance_norm(const NormalizationKernels& k, const float* x, int64_t batch, int64_t channels, int64_t n,
                   const float* scale, const float* bias, float epsilon, float* y, int threads, const Activation& act) {
  const int64_t planes = batch * channels;
  if (planes == 0 || n == 0) return;
  // Three passes over each plane (mean, variance, output).
  const int team = threads_worth_starting(3 * planes * n, planes, threads, Work::kStreaming);
  for_each_on_team(team, team, [&](int64_t t) {
    for (int64_t plane = planes * t / team; plane < planes * (t + 1) / team; ++plane) {
      const int64_t c = plane % channels;
      k.instance_norm_plane(x + plane * n, n, scale[c], bias[c], epsilon, y + plane * n);
      act.apply(y + plane * n, n);
    }
  });
}

void channel_affine(const NormalizationKernels& k, const float* x, int64_t batch, int64_t channels, int64_t n,
                    const float* scale, const float* shift, float* y, int threads, const Activation& act) {
  const int64_t planes = batch * channels;
  if (planes == 0 || n == 0) return;
  const int team = threads_worth_starting(planes * n, planes, threads, Work::kStreaming);
  for_each_on_team(team, team, [&](int64_t t) {
    for (int64_t plane = planes * t / team; plane < planes * (t + 1) / team; ++plane) {
      const int64_t c = plane % channels;
      k.channel_affine_plane(x + plane * n, n, scale[c], shift[c], act, y + plane * n);
    }
  });
}

void lrn(const NormalizationKernels& k, const float* x, int64_t batch, int64_t channels, int64_t plane,
         const LrnParams& p, float* y, int threads) {
  if (batch == 0 || channels == 0 || plane == 0) return;
  const int64_t chunks = (plane + kLrnChunk - 1) / kLrnChunk, items = batch * chunks;
  // Per element: a square entering and leaving the window, the base, the power.
  const int team = threads_worth_starting(4 * batch * channels * plane, items, threads, Work::kStreaming);
  for_each_on_team(team, items, [&](int64_t item) {
    const int64_t image = item / chunks, first = item % chunks * kLrnChunk;
    const int64_t offset = image * channels * plane;
    k.lrn_pixels(x + offset, channels, plane, first, std::min(kLrnChunk, plane - first), p, y + offset);
  });
}

}  // namespace minfer::kernels
