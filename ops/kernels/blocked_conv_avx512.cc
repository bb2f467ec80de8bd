// The AVX-512 blocked convolution: NCHW16c, 4 output blocks x 6 pixels = 24 zmm
// accumulators and 4 weight vectors (the input values are broadcast from memory by the
// multiply-adds). Compiled with -mavx512f -mfma (see CMakeLists.txt).
#include "ops/kernels/blocked_conv_impl.h"

namespace minfer::kernels {

constinit const BlockedConvKernel blocked_conv_f32_4x6_avx512 = {
    "blocked_conv_f32_4x6_avx512", Isa::kAvx512, 16, 4, &blocked_conv_row<xsimd::batch<float, xsimd::avx512f>, 4, 6>};

}  // namespace minfer::kernels
