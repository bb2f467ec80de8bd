// The AVX-512 direct convolution: 4 output channels x 3 zmm vectors (48 columns).
// Compiled with -mavx512f -mfma (see CMakeLists.txt). Built and dispatched, but not run on
// the development machine (Zen 3 has no AVX-512): its code is the AVX2 kernel's template,
// and its tile is untuned.
#include "ops/kernels/direct_conv_impl.h"

namespace minfer::kernels {

constinit const DirectConvKernel direct_conv_f32_4x48_avx512 = {
    "direct_conv_f32_4x48_avx512", Isa::kAvx512, 16, &direct_conv_row<xsimd::batch<float, xsimd::avx512f>, 4, 3>};

}  // namespace minfer::kernels
