// Measures this machine: peak fp32 FLOP/s (FMA throughput) and memory bandwidth (a
// STREAM-like triad over arrays far larger than the caches), for a given thread count.
// Each probe takes a fraction of a second on an idle machine.
#pragma once

#include "profiler/fma_peak.h"

namespace minfer {

// The instruction set the FLOP/s probe runs: the kernels' target (active_isa()),
// AVX-512F, AVX2+FMA, or for the scalar kernels SSE2, the x86-64 baseline they are
// compiled for (the compiler may vectorise them with it, never with more).
ProbeIsa probe_isa();

// Best GFLOP/s of `threads` threads each running FmaPeakKernel.
double probe_peak_gflops(int threads);

// Best GB/s of the triad a[i] = b[i] + s * c[i] on `threads` threads, counting 12 bytes
// per element (two floats read, one written) as STREAM does, without write-allocate.
double probe_bandwidth_gbs(int threads);

}  // namespace minfer
