// The machine the profiler tests put their reports on: a roofline ridge at 10 FLOPs per
// byte (100 GFLOP/s, 10 GB/s), so bounds and fractions are easy to compute by hand.
#pragma once

#include "profiler/machine_model.h"

namespace minfer::test {

inline MachineModel test_machine() {
  MachineModel m;
  m.cpu = "Test CPU";
  m.isa = "fma3+avx2";
  m.peak_gflops = 100;
  m.bandwidth_gbs.fill(10);                       // every level
  m.cache_bytes = {64 << 10, 2 << 20, 32 << 20};  // two cores of 32 KiB L1d and 1 MiB L2; 32 MiB L3
  m.theoretical = {2, 2.5, "test", 256, 2};
  return m;
}

}  // namespace minfer::test
