// The AVX2 + FMA target of the vector activations (compiled with -mavx2 -mfma).
#include "ops/kernels/vector_activations.h"
#include "ops/kernels/vector_activations_impl.h"

namespace minfer::kernels {

constinit const VectorActivations vector_activations_avx2 = {
    "vector_activations_avx2", Isa::kAvx2, &sigmoid<xsimd::fma3<xsimd::avx2>>, &tanh<xsimd::fma3<xsimd::avx2>>};

}  // namespace minfer::kernels
