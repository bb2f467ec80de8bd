// The definition of FmaPeakKernel, included only by the per-ISA fma_peak_<isa>.cc files.
#pragma once

#include "profiler/fma_peak.h"

namespace minfer {

template <class Arch>
float FmaPeakKernel::operator()(Arch, int64_t iterations) const {
  using Batch = xsimd::batch<float, Arch>;
  // acc * a + b converges to b / (1 - a) = 0.1: no overflow and no denormals, which
  // would slow some cores down.
  const Batch a(0.99999f), b(1e-6f);
  Batch acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = Batch(1.0f + 0.01f * static_cast<float>(k));
  for (int64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < kChains; ++k) acc[k] = xsimd::fma(acc[k], a, b);
  Batch sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum += acc[k];
  // Summed through memory: xsimd's hadd for avx512f needs AVX512DQ.
  alignas(64) float lanes[Batch::size];
  sum.store_aligned(lanes);
  float total = 0;
  for (float x : lanes) total += x;
  return total;
}

}  // namespace minfer
