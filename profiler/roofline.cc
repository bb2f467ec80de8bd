#include "profiler/roofline.h"

#include <algorithm>

namespace minfer {

Throughput throughput(const Cost& cost, double ms) {
  Throughput t;
  const double flops = static_cast<double>(cost.flops), bytes = static_cast<double>(cost.bytes());
  t.intensity = bytes > 0 ? flops / bytes : 0.0;
  if (ms > 0) {
    t.gflops_per_s = flops / (ms * 1e6);
    t.gbytes_per_s = bytes / (ms * 1e6);
  }
  return t;
}

RooflineBound roofline_bound(const Cost& cost, double measured_ms, const MachineModel& machine) {
  RooflineBound r;
  const double compute_ms = static_cast<double>(cost.flops) / (machine.peak_gflops * 1e6);
  r.level = machine.level_of(cost.bytes());
  const double memory_ms = static_cast<double>(cost.bytes()) / (machine.bandwidth(r.level) * 1e6);
  r.compute_bound = compute_ms > memory_ms;
  r.ms = std::max(compute_ms, memory_ms);
  r.gflops_per_s = r.ms > 0 ? static_cast<double>(cost.flops) / (r.ms * 1e6) : 0.0;
  r.fraction = measured_ms > 0 ? r.ms / measured_ms : 0.0;
  return r;
}

}  // namespace minfer
