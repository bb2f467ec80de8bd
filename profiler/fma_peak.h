// The loop that measures peak fp32 FLOP/s: independent FMA chains, enough of them to
// cover the FMA latency on every pipe. Compiled once per instruction set
// (fma_peak_<isa>.cc, each with its own compiler flags) and chosen at run time for the
// kernels' target (profiler/isa.h's active_isa(): the best the CPU runs unless
// MINFER_ISA forces another), so the roof is what the kernels in use can reach.
#pragma once

#include <cstdint>
#include <xsimd/xsimd.hpp>

namespace minfer {

struct FmaPeakKernel {
  // Zen 3 has 2 FMA pipes of latency 4 (8 chains in flight), Skylake-X 2 of latency 4;
  // 12 chains cover both with room, and fit the 16 vector registers of AVX2.
  static constexpr int kChains = 12;

  // Runs `iterations` rounds of kChains vector FMAs; returns a sum of the results so
  // the work cannot be optimised away. FLOPs done: iterations * kChains * lanes * 2.
  template <class Arch>
  float operator()(Arch, int64_t iterations) const;
};

// The instruction set the probe runs: xsimd's name and the vector width in bits.
struct ProbeIsa {
  const char* name;
  int vector_bits;
};

struct ProbeIsaOf {
  template <class Arch>
  ProbeIsa operator()(Arch) const {
    return {Arch::name(), static_cast<int>(Arch::alignment() * 8)};
  }
};

extern template float FmaPeakKernel::operator()<xsimd::avx512f>(xsimd::avx512f, int64_t) const;
extern template float FmaPeakKernel::operator()<xsimd::fma3<xsimd::avx2>>(xsimd::fma3<xsimd::avx2>, int64_t) const;
extern template float FmaPeakKernel::operator()<xsimd::sse2>(xsimd::sse2, int64_t) const;

}  // namespace minfer
