// The normalisation kernels over xsimd batches, instantiated per target by
// normalization_<isa>.cc; internal linkage, so no target's code is shared with another's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <xsimd/xsimd.hpp>

#include "ops/kernels/activation_math.h"
#include "ops/kernels/normalization_math.h"
#include "ops/kernels/simd.h"

namespace minfer::kernels {
namespace {

// One double batch from as many consecutive floats.
template <class Arch>
xsimd::batch<double, Arch> widened(const float* p) {
  if constexpr (std::is_same_v<Arch, xsimd::avx512f>)
    return _mm512_cvtps_pd(_mm256_loadu_ps(p));
  else
    return _mm256_cvtps_pd(_mm_loadu_ps(p));
}

// Two double batches rounded to floats, as one float batch: lo's lanes first.
template <class Arch>
xsimd::batch<float, Arch> narrowed(xsimd::batch<double, Arch> lo, xsimd::batch<double, Arch> hi) {
  if constexpr (std::is_same_v<Arch, xsimd::avx512f>) {
    const __m512 low = _mm512_castps256_ps512(_mm512_cvtpd_ps(lo));
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(low), _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1));
  } else {
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
  }
}

// Sum of term(widened x[i..i + W)) over a plane, four accumulators so that the adds'
// latency overlaps; the last n % W values through scalar_term.
template <class Arch, class Term, class ScalarTerm>
double plane_sum(const float* x, int64_t n, Term term, ScalarTerm scalar_term) {
  using D = xsimd::batch<double, Arch>;
  constexpr int64_t W = D::size;
  D a0(0.0), a1(0.0), a2(0.0), a3(0.0);
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    a0 += term(widened<Arch>(x + i));
    a1 += term(widened<Arch>(x + i + W));
    a2 += term(widened<Arch>(x + i + 2 * W));
    a3 += term(widened<Arch>(x + i + 3 * W));
  }
  for (; i + W <= n; i += W) a0 += term(widened<Arch>(x + i));
  double sum = xsimd::hadd((a0 + a1) + (a2 + a3));
  for (; i < n; ++i) sum += scalar_term(static_cast<double>(x[i]));
  return sum;
}

template <class Arch>
void instance_norm_plane(const float* x, int64_t n, float scale, float bias, float epsilon, float* y) {
  using D = xsimd::batch<double, Arch>;
  using F = xsimd::batch<float, Arch>;
  constexpr int64_t W = F::size;
  if (n == 0) return;
  const auto value = [](auto v) { return v; };
  const double mean = plane_sum<Arch>(x, n, value, value) / static_cast<double>(n);
  const D m(mean);
  const double squares = plane_sum<Arch>(
      x, n,
      [m](D v) {
        const D d = v - m;
        return d * d;
      },
      [mean](double v) { return (v - mean) * (v - mean); });
  const PlaneAffine a = plane_affine(mean, squares, n, scale, epsilon);
  const F hi(a.mean_hi), lo(a.mean_lo), factor(a.factor), shift(bias);
  const auto normalized = [&](F v) { return fused_multiply_add<Arch>((v - hi) - lo, factor, shift); };
  int64_t i = 0;
  for (; i + W <= n; i += W) normalized(F::load_unaligned(x + i)).store_unaligned(y + i);
  if (i == n) return;
  alignas(64) float tail[W] = {};
  std::copy(x + i, x + n, tail);
  normalized(F::load_aligned(tail)).store_aligned(tail);
  std::copy(tail, tail + (n - i), y + i);
}

template <class Arch>
void channel_affine_plane(const float* x, int64_t n, float scale, float shift, const Activation& act, float* y) {
  using F = xsimd::batch<float, Arch>;
  constexpr int64_t W = F::size;
  const F a(scale), b(shift);
  with_activation<F>(act, [&](auto activate) {
    int64_t i = 0;
    for (; i + W <= n; i += W)
      activate(fused_multiply_add<Arch>(F::load_unaligned(x + i), a, b)).store_unaligned(y + i);
    if (i == n) return;
    alignas(64) float tail[W] = {};
    std::copy(x + i, x + n, tail);
    activate(fused_multiply_add<Arch>(F::load_aligned(tail), a, b)).store_aligned(tail);
    std::copy(tail, tail + (n - i), y + i);
  });
  if (!activation_in_registers(act)) act.apply(y, n);
}

// LRN's power on one float batch of values x whose window sums are lo's and hi's lanes.
template <class Arch, LrnPower Power>
[[gnu::always_inline]] inline xsimd::batch<float, Arch> lrn_batch(xsimd::batch<float, Arch> x,
                                                                  xsimd::batch<double, Arch> sum_lo,
                                                                  xsimd::batch<double, Arch> sum_hi,
                                                                  const LrnParams& p) {
  using D = xsimd::batch<double, Arch>;
  const auto base = [&p](D sum) { return D(p.bias) + D(p.alpha_over_size) * sum; };
  if constexpr (Power == LrnPower::kZero) {
    return x;
  } else if constexpr (Power == LrnPower::kGeneral) {
    // |base|^-beta in float, then its sign (or NaN) where the base is negative, as pow's.
    using F = xsimd::batch<float, Arch>;
    const F b = narrowed<Arch>(base(sum_lo), base(sum_hi));
    const F r = xsimd::exp(F(static_cast<float>(-p.beta)) * xsimd::log(xsimd::abs(b)));
    return x * xsimd::select(b < F(0.0f), r * F(static_cast<float>(p.negative_base_factor)), r);
  } else if constexpr (Power == LrnPower::kHalf) {
    return x / xsimd::sqrt(narrowed<Arch>(base(sum_lo), base(sum_hi)));
  } else if constexpr (Power == LrnPower::kOne) {
    return x / narrowed<Arch>(base(sum_lo), base(sum_hi));
  } else {
    const auto s = xsimd::sqrt(narrowed<Arch>(base(sum_lo), base(sum_hi)));
    return x / (s * xsimd::sqrt(s));
  }
}

// One tile of two float batches' pixels through every channel: the window's sum of
// squares per pixel in four double batches, each channel's square added as it enters the
// window and subtracted as it leaves: 2 adds an element whatever the size. A square is
// exact in double, so what a sum keeps of values that left is its rounding, 2^-53 of the
// largest it held. A partial tile (Partial, `count` pixels) reads and writes through
// zero-padded copies.
template <class Arch, LrnPower Power, bool Partial>
void lrn_tile(const float* x, int64_t channels, int64_t plane, int64_t count, const LrnParams& p, float* y) {
  using D = xsimd::batch<double, Arch>;
  using F = xsimd::batch<float, Arch>;
  constexpr int64_t W = F::size, DW = D::size, T = 2 * W;
  alignas(64) float padded[T] = {};
  const auto row = [&](int64_t c) -> const float* {
    if constexpr (!Partial) {
      return x + c * plane;
    } else {
      std::copy(x + c * plane, x + c * plane + count, padded);
      return padded;
    }
  };
  D sum[4] = {D(0.0), D(0.0), D(0.0), D(0.0)};
  const auto add = [&](int64_t c) {
    const float* r = row(c);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const D v = widened<Arch>(r + k * DW);
      sum[k] += v * v;
    }
  };
  const auto subtract = [&](int64_t c) {
    const float* r = row(c);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const D v = widened<Arch>(r + k * DW);
      sum[k] -= v * v;
    }
  };
  for (int64_t c = 0; c < std::min(p.after, channels); ++c) add(c);
  for (int64_t c = 0; c < channels; ++c) {
    if (c + p.after < channels) add(c + p.after);
    if (c - p.before - 1 >= 0) subtract(c - p.before - 1);
    const float* r = row(c);
    const F lo = lrn_batch<Arch, Power>(F::load_unaligned(r), sum[0], sum[1], p);
    const F hi = lrn_batch<Arch, Power>(F::load_unaligned(r + W), sum[2], sum[3], p);
    float* out = y + c * plane;
    if constexpr (!Partial) {
      lo.store_unaligned(out);
      hi.store_unaligned(out + W);
    } else {
      alignas(64) float values[T];
      lo.store_aligned(values);
      hi.store_aligned(values + W);
      std::copy(values, values + count, out);
    }
  }
}

template <class Arch, LrnPower Power>
void lrn_pixels_with(const float* x, int64_t channels, int64_t plane, int64_t first, int64_t count, const LrnParams& p,
                     float* y) {
  constexpr int64_t T = 2 * xsimd::batch<float, Arch>::size;
  const int64_t end = first + count;
  int64_t i = first;
  for (; i + T <= end; i += T) lrn_tile<Arch, Power, false>(x + i, channels, plane, T, p, y + i);
  if (i < end) lrn_tile<Arch, Power, true>(x + i, channels, plane, end - i, p, y + i);
}

template <class Arch>
void lrn_pixels(const float* x, int64_t channels, int64_t plane, int64_t first, int64_t count, const LrnParams& p,
                float* y) {
  switch (p.power) {
    case LrnPower::kZero: return lrn_pixels_with<Arch, LrnPower::kZero>(x, channels, plane, first, count, p, y);
    case LrnPower::kHalf: return lrn_pixels_with<Arch, LrnPower::kHalf>(x, channels, plane, first, count, p, y);
    case LrnPower::kThreeQuarters:
      return lrn_pixels_with<Arch, LrnPower::kThreeQuarters>(x, channels, plane, first, count, p, y);
    case LrnPower::kOne: return lrn_pixels_with<Arch, LrnPower::kOne>(x, channels, plane, first, count, p, y);
    case LrnPower::kGeneral: return lrn_pixels_with<Arch, LrnPower::kGeneral>(x, channels, plane, first, count, p, y);
  }
}

}  // namespace
}  // namespace minfer::kernels
