// The AVX-512 target of the vector activations (compiled with -mavx512f -mfma). Built
// and dispatched, but not run on the development machine (no AVX-512).
#include "ops/kernels/vector_activations.h"
#include "ops/kernels/vector_activations_impl.h"

namespace minfer::kernels {

const VectorActivations vector_activations_avx512 = {"vector_activations_avx512", &sigmoid<xsimd::avx512f>,
                                                     &tanh<xsimd::avx512f>};

}  // namespace minfer::kernels
