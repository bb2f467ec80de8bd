// The instruction sets the kernel, op and engine tests cover. ctest runs those tests once
// per target with MINFER_ISA set (tests/CMakeLists.txt); a run for a target this CPU
// cannot execute skips every test, saying so (isa_test_util.cc's test environment).
#pragma once

#include <vector>

#include "profiler/isa.h"

namespace minfer::test {

// The targets a test that compares kernels runs: the forced one under MINFER_ISA (each
// ctest run covers its own), else every one this CPU runs, best first.
std::vector<Isa> isas_under_test();

}  // namespace minfer::test
