// The instruction sets the fast kernels are compiled for, and which of them this CPU
// runs: the one run-time dispatch point (xsimd's CPU detection) every kernel family uses.
#pragma once

#include <vector>

namespace minfer::kernels {

// Highest last. Each SIMD target's code lives in translation units named *_<isa>.cc,
// compiled with that target's flags (see CMakeLists.txt); kScalar is portable C++.
enum class Isa { kScalar, kAvx2, kAvx512 };

const char* isa_name(Isa isa);     // "scalar", "avx2" (AVX2 with FMA), "avx512" (AVX-512F)
bool isa_runnable(Isa isa);        // whether this CPU executes the target's instructions
Isa best_isa();                    // the highest runnable target
Isa active_isa();                  // the target kernels bind to: best_isa(), or MINFER_ISA
std::vector<Isa> runnable_isas();  // best first; kScalar always

}  // namespace minfer::kernels
