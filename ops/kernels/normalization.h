// The normalisations over NCHW's planes and channels: InstanceNormalization (each
// (n, c) plane to zero mean and unit variance, then scaled and shifted), inference's
// BatchNormalization (each plane scaled and shifted by its channel's constants) and LRN
// (each element divided by a power of its channel window's sum of squares). One implementation
// per ISA, chosen through the kernels' one dispatch point (isa.h); the threads split
// the work in pieces fixed by the shape alone, so the bits do not depend on them.
#pragma once

#include <cstdint>

#include "ops/activation.h"
#include "profiler/isa.h"

namespace minfer::kernels {

// How LRN raises its base to -beta: the common exponents by square roots and a division
// (a few ulps), any other by exp(-beta log base) in float on the vector targets (about
// |beta ln base| ulps more: 3.4x the time of 3/4 on AlexNet's 96x55x55, against 11x in
// double) and by std::pow in double on the scalar one.
enum class LrnPower { kZero, kHalf, kThreeQuarters, kOne, kGeneral };

struct LrnParams {
  int64_t before = 0, after = 0;  // the window of channel c: [c - before, c + after], clipped to [0, C)
  double alpha_over_size = 0.0, bias = 1.0, beta = 0.75;
  LrnPower power = LrnPower::kThreeQuarters;
  // base^-beta = |base|^-beta times this where base < 0: 1 or -1 for an even or odd
  // integer beta, NaN for any other (as pow).
  double negative_base_factor = 1.0;
};

// The parameters of ONNX's LRN for `size`, alpha, beta and bias: floor((size - 1) / 2)
// channels before, ceil((size - 1) / 2) after.
LrnParams lrn_params(int64_t size, double alpha, double beta, double bias);

struct NormalizationKernels {
  const char* name;  // normalization_<isa>
  Isa isa;
  // y[i] = (x[i] - mean) / sqrt(var + epsilon) * scale + bias over one plane of n floats,
  // mean and (biased) variance summed in double, two passes. y may be x.
  void (*instance_norm_plane)(const float* x, int64_t n, float scale, float bias, float epsilon, float* y);
  // y[i] = act(x[i] * scale + shift) over one plane of n floats (one rounding on the
  // vector targets, a multiply-add; two on the scalar one), the activations that run on
  // registers there. y may be x.
  void (*channel_affine_plane)(const float* x, int64_t n, float scale, float shift, const Activation& act, float* y);
  // LRN of pixels [first, first + count) of one image x[C][plane] into y (not x): each
  // element divided by (bias + alpha / size * the window's sum of squares)^beta, the sums
  // kept in double as the window moves across the channels.
  void (*lrn_pixels)(const float* x, int64_t channels, int64_t plane, int64_t first, int64_t count, const LrnParams& p,
                     float* y);
};

// The set of target isa, or nullptr when this CPU cannot run it.
const NormalizationKernels* normalization_for(Isa isa);
// isa's set, or the scalar one when this CPU cannot run isa.
const NormalizationKernels& normalization_or_scalar(Isa isa);

// InstanceNormalization of x [batch, channels, n] into y (may be x) with scale[c] and
// bias[c], then `act` (fused: on each plane while it is in cache), on up to `threads`
// threads, each plane by one.
void instance_norm(const NormalizationKernels& k, const float* x, int64_t batch, int64_t channels, int64_t n,
                   const float* scale, const float* bias, float epsilon, float* y, int threads,
                   const Activation& act = {});
// BatchNormalization's y = act(x * scale[c] + shift[c]) of x [batch, channels, n] into y
// (may be x), on up to `threads` threads, each plane by one.
void channel_affine(const NormalizationKernels& k, const float* x, int64_t batch, int64_t channels, int64_t n,
                    const float* scale, const float* shift, float* y, int threads, const Activation& act);
// LRN of x [batch, channels, plane] into y (not x), on up to `threads` threads, each
// taking whole chunks of an image's pixels.
void lrn(const NormalizationKernels& k, const float* x, int64_t batch, int64_t channels, int64_t plane,
         const LrnParams& p, float* y, int threads);

extern const NormalizationKernels normalization_scalar;
extern const NormalizationKernels normalization_avx2;
extern const NormalizationKernels normalization_avx512;

}  // namespace minfer::kernels
