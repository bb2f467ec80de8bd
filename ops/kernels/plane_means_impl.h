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

}  // namespace
}  // namespace minfer::kernels
