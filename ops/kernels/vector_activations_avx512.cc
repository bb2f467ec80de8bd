// The AVX-512 target of the vector activations (compiled with -mavx512f -mfma); its
// tests run where the CPU has AVX-512.
#include "ops/kernels/vector_activations.h"
#include "ops/kernels/vector_activations_impl.h"

namespace minfer::kernels {

using Avx512 = xsimd::avx512f;
constinit const VectorActivations vector_activations_avx512 = {"vector_activations_avx512",
                                                               Isa::kAvx512,
                                                               &sigmoid<Avx512>,
                                                               &tanh<Avx512>,
                                                               &hard_sigmoid<Avx512>,
                                                               &hard_swish<Avx512>,
                                                               &swish<Avx512>,
                                                               &erf<Avx512>,
                                                               &gelu<Avx512>,
                                                               &exp<Avx512>,
                                                               &softmax<Avx512>};

}  // namespace minfer::kernels
