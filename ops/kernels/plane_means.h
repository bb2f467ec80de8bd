// The mean of each of a run of contiguous planes (GlobalAveragePool, ReduceMean over the
// spatial axes), summed in double so that large planes lose nothing; one implementation
// per ISA, chosen through the kernels' one dispatch point (isa.h).
#pragma once

#include <cstdint>

#include "profiler/isa.h"

namespace minfer::kernels {

struct PlaneMeans {
  const char* name;  // plane_means_<isa>
  Isa isa;
  // y[p] = (sum of x[p * n + i] for i in [0, n), in double) / n for p in [0, planes).
  void (*run)(const float* x, int64_t planes, int64_t n, float* y);
  // The same over NCHWc blocks of blocked_lanes(isa) channels, n pixels each: y[b * c + l]
  // the mean of channel l of block b (null on the scalar target, which has no NCHWc).
  void (*run_blocked)(const float* x, int64_t blocks, int64_t n, float* y);
};

// The set of target isa, or nullptr when this CPU cannot run it.
const PlaneMeans* plane_means_for(Isa isa);

// y[p] = mean of plane p of `planes` planes of n floats, with the means of isa, on up to
// `threads` threads (each plane summed by one thread in a fixed order: the bits do not
// depend on the thread count).
void plane_means(Isa isa, const float* x, int64_t planes, int64_t n, float* y, int threads);
// The means of each channel of `blocks` NCHWc blocks of n pixels (isa's run_blocked,
// which must exist), on up to `threads` threads, each block summed by one.
void blocked_plane_means(Isa isa, const float* x, int64_t blocks, int64_t n, float* y, int threads);

extern const PlaneMeans plane_means_scalar;
extern const PlaneMeans plane_means_avx2;
extern const PlaneMeans plane_means_avx512;

}  // namespace minfer::kernels
