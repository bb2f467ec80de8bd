// Measures this machine: peak fp32 FLOP/s (FMA throughput) and the bandwidth of each
// cache level and of main memory (a STREAM-like triad over working sets sized from the
// cache sizes), for a given thread count. The probes take well under a second together.
#pragma once

#include <array>

#include "profiler/cpu_info.h"
#include "profiler/fma_peak.h"

namespace minfer {

// The instruction set the FLOP/s probe runs: the kernels' target (active_isa()),
// AVX-512F, AVX2+FMA, or for the scalar kernels SSE2, the x86-64 baseline they are
// compiled for (the compiler may vectorise them with it, never with more).
ProbeIsa probe_isa();

// Best GFLOP/s of `threads` threads each running FmaPeakKernel.
double probe_peak_gflops(int threads);

// The triad's working set (its three arrays, all threads together) for each level, L1,
// L2, L3 and main memory: half of each core's L1d and L2 (per thread), half of the shared
// L3, and three times the L3 (96 to 384 MiB) for main memory. Sizes the system does not
// report are taken as 32 KiB, 256 KiB and 8 MiB, the least of current x86 cores.
std::array<int64_t, 4> triad_working_sets(const CacheSizes& caches, int threads);

// Best GB/s of the triad a[i] = b[i] + s * c[i] on `threads` threads over each of those
// working sets, counting 12 bytes per element (two floats read, one written) as STREAM
// does, without write-allocate.
std::array<double, 4> probe_bandwidth_gbs(int threads, const CacheSizes& caches);

}  // namespace minfer
