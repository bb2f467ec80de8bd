// The AVX2 target of the normalisation kernels (compiled with -mavx2 -mfma).
#include "ops/kernels/normalization.h"
#include "ops/kernels/normalization_impl.h"

namespace minfer::kernels {

using Avx2 = xsimd::fma3<xsimd::avx2>;
constinit const NormalizationKernels normalization_avx2 = {"normalization_avx2", Isa::kAvx2, &instance_norm_plane<Avx2>,
                                                           &channel_affine_plane<Avx2>, &lrn_pixels<Avx2>};

}  // namespace minfer::kernels
