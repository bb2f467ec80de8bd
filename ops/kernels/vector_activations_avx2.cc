// The AVX2 + FMA target of the vector activations (compiled with -mavx2 -mfma).
#include "ops/kernels/vector_activations.h"
#include "ops/kernels/vector_activations_impl.h"

namespace minfer::kernels {

using Avx2 = xsimd::fma3<xsimd::avx2>;
constinit const VectorActivations vector_activations_avx2 = {"vector_activations_avx2",
                                                             Isa::kAvx2,
                                                             &sigmoid<Avx2>,
                                                             &tanh<Avx2>,
                                                             &hard_sigmoid<Avx2>,
                                                             &hard_swish<Avx2>,
                                                             &swish<Avx2>,
                                                             &erf<Avx2>,
                                                             &gelu<Avx2>,
                                                             &exp<Avx2>,
                                                             &softmax<Avx2>};

}  // namespace minfer::kernels
