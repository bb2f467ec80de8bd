#include "ops/kernels/isa.h"

#include <xsimd/xsimd.hpp>

namespace minfer::kernels {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "";
}

bool isa_runnable(Isa isa) {
  static const auto cpu = xsimd::available_architectures();
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return cpu.fma3_avx2;
    case Isa::kAvx512: return cpu.avx512f;
  }
  return false;
}

Isa best_isa() {
  static const Isa best = runnable_isas().front();
  return best;
}

Isa active_isa() { return best_isa(); }

std::vector<Isa> runnable_isas() {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::kAvx512, Isa::kAvx2, Isa::kScalar})
    if (isa_runnable(isa)) isas.push_back(isa);
  return isas;
}

}  // namespace minfer::kernels
