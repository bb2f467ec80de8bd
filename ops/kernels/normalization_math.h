// What every target of the normalisation kernels computes alike, in scalar C++: the
// factors of an instance-normalised plane from its sums, and LRN's power on one value.
// Internal linkage: included by each target's translation unit, compiled with its flags.
#pragma once

#include <cmath>
#include <cstdint>

#include "ops/kernels/normalization.h"

namespace minfer::kernels {
namespace {

// y = ((x - mean_hi) - mean_lo) * factor + bias, factor = scale / sqrt(var + epsilon)
// from the plane's sum and sum of squared deviations in double. The mean is split into
// the float nearest it and the float nearest the rest: x - mean_hi is exact for x within
// a factor of 2 of it, so a plane far from zero (1000 +- 1) loses nothing to the mean's
// rounding (half an ulp of 1000, 3e-5, would be 5e-5 of a unit deviation there).
struct PlaneAffine {
  float mean_hi, mean_lo, factor;
};

inline PlaneAffine plane_affine(double mean, double squared_deviations, int64_t n, float scale, float epsilon) {
  const double var = squared_deviations / static_cast<double>(n);
  const float hi = static_cast<float>(mean);
  return {hi, static_cast<float>(mean - hi), static_cast<float>(scale / std::sqrt(var + static_cast<double>(epsilon)))};
}

// x / base^beta, base = bias + alpha / size * sum, as the vector targets compute it: the
// base in double, the common powers in float by square roots; the others by std::pow.
inline float lrn_value(float x, double sum, const LrnParams& p) {
  const double base = p.bias + p.alpha_over_size * sum;
  const float b = static_cast<float>(base);
  switch (p.power) {
    case LrnPower::kZero: return x;
    case LrnPower::kHalf: return x / std::sqrt(b);
    case LrnPower::kThreeQuarters: {
      const float s = std::sqrt(b);
      return x / (s * std::sqrt(s));
    }
    case LrnPower::kOne: return x / b;
    case LrnPower::kGeneral: break;
  }
  return x * static_cast<float>(std::pow(base, -p.beta));
}

}  // namespace
}  // namespace minfer::kernels
