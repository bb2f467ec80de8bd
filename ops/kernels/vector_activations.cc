// The portable vector activations and the run-time choice among the targets.
#include "ops/kernels/vector_activations.h"

#include <cmath>
#include <xsimd/xsimd.hpp>

namespace minfer::kernels {
namespace {

void sigmoid_scalar(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-y[i]));
}

void tanh_scalar(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(y[i]);
}

// xsimd::dispatch picks the best architecture this CPU has among those listed.
struct ActivationsForArch {
  const VectorActivations* operator()(xsimd::avx512f) const { return &vector_activations_avx512; }
  const VectorActivations* operator()(xsimd::fma3<xsimd::avx2>) const { return &vector_activations_avx2; }
  const VectorActivations* operator()(xsimd::sse2) const { return &vector_activations_scalar; }
};
using DispatchedArchs = xsimd::arch_list<xsimd::avx512f, xsimd::fma3<xsimd::avx2>, xsimd::sse2>;

}  // namespace

const VectorActivations vector_activations_scalar = {"vector_activations_scalar", &sigmoid_scalar, &tanh_scalar};

const VectorActivations& best_vector_activations() {
  static const VectorActivations* const best = xsimd::dispatch<DispatchedArchs>(ActivationsForArch{})();
  return *best;
}

std::vector<const VectorActivations*> runnable_vector_activations() {
  const auto cpu = xsimd::available_architectures();
  std::vector<const VectorActivations*> sets;
  if (cpu.avx512f) sets.push_back(&vector_activations_avx512);
  if (cpu.fma3_avx2) sets.push_back(&vector_activations_avx2);
  sets.push_back(&vector_activations_scalar);
  return sets;
}

}  // namespace minfer::kernels
