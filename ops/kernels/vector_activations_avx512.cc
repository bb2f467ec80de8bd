// The AVX-512 target of the vector activations (compiled with -mavx512f -mfma). Built
// and dispatched; this development machine has no AVX-512, so its tests skip it.
#include "ops/kernels/vector_activations.h"
#include "ops/kernels/vector_activations_impl.h"

namespace minfer::kernels {

constinit const VectorActivations vector_activations_avx512 = {"vector_activations_avx512", Isa::kAvx512,
                                                               &sigmoid<xsimd::avx512f>, &tanh<xsimd::avx512f>};

}  // namespace minfer::kernels
