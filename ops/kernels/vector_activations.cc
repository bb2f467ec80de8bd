// The portable vector activations and the choice among the targets.
#include "ops/kernels/vector_activations.h"

#include <cmath>

namespace minfer::kernels {
namespace {

void sigmoid_scalar(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-y[i]));
}

void tanh_scalar(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(y[i]);
}

}  // namespace

constinit const VectorActivations vector_activations_scalar = {"vector_activations_scalar", Isa::kScalar,
                                                               &sigmoid_scalar, &tanh_scalar};

const VectorActivations* vector_activations_for(Isa isa) {
  if (!isa_runnable(isa)) return nullptr;
  return per_isa<const VectorActivations*>(isa, &vector_activations_scalar, &vector_activations_avx2,
                                           &vector_activations_avx512);
}

const VectorActivations& active_vector_activations() {
  return *vector_activations_for(active_isa());
}

}  // namespace minfer::kernels
