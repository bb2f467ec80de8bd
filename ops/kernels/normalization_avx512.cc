// The AVX-512 target of the normalisation kernels (compiled with -mavx512f -mfma).
#include "ops/kernels/normalization.h"
#include "ops/kernels/normalization_impl.h"

namespace minfer::kernels {

using Avx512 = xsimd::avx512f;
constinit const NormalizationKernels normalization_avx512 = {"normalization_avx512", Isa::kAvx512,
                                                             &instance_norm_plane<Avx512>,
                                                             &channel_affine_plane<Avx512>, &lrn_pixels<Avx512>};

}  // namespace minfer::kernels
