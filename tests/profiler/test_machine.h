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
  m.bandwidth_gbs = 10;
  m.theoretical = {2, 2.5, "test", 256, 2};
  return m;
}

}  // namespace minfer::test
