// The machine's instruction sets: those the fast kernels are compiled for, which of them
// this CPU runs, and the one every kernel family dispatches on (here, below the ops, so
// the machine model and the kernels read one answer): the run-time dispatch point (xsimd's CPU
// detection, then the MINFER_ISA override) that the GEMM, depthwise and direct
// convolutions, the LSTM's vector activations and the machine probe all use.
#pragma once

#include <string_view>
#include <vector>

namespace minfer {

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

// Of three values, one per target, the one for `isa`: the per-ISA choice every kernel
// family makes (whether this CPU runs `isa` is isa_runnable's question).
template <class T>
T per_isa(Isa isa, T scalar, T avx2, T avx512) {
  switch (isa) {
    case Isa::kAvx2: return avx2;
    case Isa::kAvx512: return avx512;
    case Isa::kScalar: break;
  }
  return scalar;
}

// MINFER_ISA's value checked against the targets `runnable` (best first): the target, or
// UsageError with the one-line message active_isa() throws.
Isa parse_isa_override(std::string_view value, const std::vector<Isa>& runnable);

}  // namespace minfer
