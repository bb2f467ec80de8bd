// The loop that measures bandwidth: STREAM's triad a[i] = b[i] + s * c[i], repeated
// over the same arrays, in the vectors of an instruction set. Compiled once per
// instruction set (triad_<isa>.cc, each with its own compiler flags) like the FMA loop
// (fma_peak.h): a cache level's bandwidth depends on the width of each load and store,
// so the roof of an op whose data sits in L1 is what the kernels' vectors can reach.
#pragma once

#include <cstddef>
#include <xsimd/xsimd.hpp>

namespace minfer {

struct TriadKernel {
  // `repeats` passes of a[i] = b[i] + s * c[i] over i < n; moves 12 * n * repeats bytes
  // as STREAM counts them (two floats read, one written, no write-allocate).
  template <class Arch>
  void operator()(Arch, float* a, const float* b, const float* c, size_t n, float s, int repeats) const;
};

extern template void TriadKernel::operator()<xsimd::avx512f>(xsimd::avx512f, float*, const float*, const float*, size_t,
                                                             float, int) const;
extern template void TriadKernel::operator()<xsimd::fma3<xsimd::avx2>>(xsimd::fma3<xsimd::avx2>, float*, const float*,
                                                                       const float*, size_t, float, int) const;
extern template void TriadKernel::operator()<xsimd::sse2>(xsimd::sse2, float*, const float*, const float*, size_t,
                                                          float, int) const;

}  // namespace minfer
