// The instruction sets the fast kernels are compiled for, which of them this CPU runs,
// and the one every kernel family dispatches on: the run-time dispatch point (xsimd's CPU
// detection, then the MINFER_ISA override) that the GEMM, depthwise and direct
// convolutions, the LSTM's vector activations and the machine probe all use.
#pragma once

#include <string_view>
#include <vector>

namespace minfer::kernels {

// Highest last. Each SIMD target's code lives in translation units named *_<isa>.cc,
// compiled with that target's flags (see CMakeLists.txt); kScalar is portable C++.
enum class Isa { kScalar, kAvx2, kAvx512 };

const char* isa_name(Isa isa);     // "scalar", "avx2" (AVX2 with FMA), "avx512" (AVX-512F)
bool isa_runnable(Isa isa);        // whether this CPU executes the target's instructions
std::vector<Isa> runnable_isas();  // best first; kScalar always

// The target every kernel family runs: the environment variable MINFER_ISA (scalar,
// avx2 or avx512; read once, on the first call) when it is set and not empty, else the
// best runnable one. Throws UsageError, on every call, when MINFER_ISA names an unknown
// target or one this CPU cannot run, so the first kernel choice (and compile()) refuses.
Isa active_isa();

// MINFER_ISA's value checked against the targets `runnable` (best first): the target, or
// UsageError with the one-line message active_isa() throws.
Isa parse_isa_override(std::string_view value, const std::vector<Isa>& runnable);

}  // namespace minfer::kernels
