// Throughput and the roofline model (Williams, Waterman, Patterson 2009): an op doing
// F FLOPs over B bytes can run no faster than max(F / peak, B / bandwidth), i.e. at
// most min(peak, intensity x bandwidth) GFLOP/s. The bandwidth is that of the level its
// working set (the bytes it reads and writes) fits in: an op whose inputs, weights and
// output fit in L2 is held to L2's roof, not main memory's. build_report is the only caller.
#pragma once

#include "profiler/cost.h"
#include "profiler/machine_model.h"

namespace minfer {

// What an op (or a whole model) attained in `ms` milliseconds.
struct Throughput {
  double intensity = 0;  // FLOPs per byte moved; 0 when no bytes move
  double gflops_per_s = 0;
  double gbytes_per_s = 0;
};

Throughput throughput(const Cost& cost, double ms);

struct RooflineBound {
  double gflops_per_s = 0;  // min(peak, intensity x bandwidth)
  double ms = 0;            // the least time the roofline allows
  // ms / measured ms: the fraction of the bound reached (0 when nothing was measured);
  // above 1 only by measurement noise, or when an op's data came from a faster level
  // than its working set fits in (a small part of a large working set, left in L1).
  double fraction = 0;
  bool compute_bound = false;              // FLOPs, not bytes, set the least time
  MemoryLevel level = MemoryLevel::kDram;  // whose bandwidth is the memory roof
};

RooflineBound roofline_bound(const Cost& cost, double measured_ms, const MachineModel& machine);

}  // namespace minfer
