// The plane means over xsimd double batches, instantiated per target by
// plane_means_<isa>.cc; internal linkage, so no target's code is shared with another's.
#pragma once

#include <cstdint>
#include <type_traits>
#include <xsimd/xsimd.hpp>

namespace minfer::kernels {
namespace {

// One double batch from as many consecutive floats.
template <class Arch>
xsimd::batch<double, Arch> load_widened(const float* p) {
  if constexpr (std::is_same_v<Arch, xsimd::avx512f>)
    return _mm512_cvtps_pd(_mm256_loadu_ps(p));
  else
    return _mm256_cvtps_pd(_mm_loadu_ps(p));
}

// Four independent accumulators, so the adds' latency overlaps: a plane streams at
// memory speed rather than at one add per latency.
template <class Arch>
void plane_means(const float* x, int64_t planes, int64_t n, float* y) {
  using D = xsimd::batch<double, Arch>;
  constexpr int64_t W = D::size;
  for (int64_t p = 0; p < planes; ++p, x += n) {
    D a0(0.0), a1(0.0), a2(0.0), a3(0.0);
    int64_t i = 0;
    for (; i + 4 * W <= n; i += 4 * W) {
      a0 += load_widened<Arch>(x + i);
      a1 += load_widened<Arch>(x + i + W);
      a2 += load_widened<Arch>(x + i + 2 * W);
      a3 += load_widened<Arch>(x + i + 3 * W);
    }
    for (; i + W <= n; i += W) a0 += load_widened<Arch>(x + i);
    double sum = xsimd::hadd((a0 + a1) + (a2 + a3));
    for (; i < n; ++i) sum += x[i];
    y[p] = static_cast<float>(sum / static_cast<double>(n));
  }
}

// NCHWc: blocks of two double batches' worth of channels, n pixels each, a pixel's
// channels consecutive; each channel summed over even and odd pixels apart, then added.
template <class Arch>
void blocked_means(const float* x, int64_t blocks, int64_t n, float* y) {
  using D = xsimd::batch<double, Arch>;
  constexpr int64_t W = D::size, L = 2 * W;
  for (int64_t b = 0; b < blocks; ++b, x += n * L, y += L) {
    D e0(0.0), e1(0.0), o0(0.0), o1(0.0);
    int64_t i = 0;
    for (; i + 2 <= n; i += 2) {
      e0 += load_widened<Arch>(x + i * L);
      e1 += load_widened<Arch>(x + i * L + W);
      o0 += load_widened<Arch>(x + (i + 1) * L);
      o1 += load_widened<Arch>(x + (i + 1) * L + W);
    }
    if (i < n) {
      e0 += load_widened<Arch>(x + i * L);
      e1 += load_widened<Arch>(x + i * L + W);
    }
    alignas(64) double sums[L];
    (e0 + o0).store_aligned(sums);
    (e1 + o1).store_aligned(sums + W);
    for (int64_t l = 0; l < L; ++l) y[l] = static_cast<float>(sums[l] / static_cast<double>(n));
  }
}

}  // namespace
}  // namespace minfer::kernels
