// The AVX-512 blocked convolution: NCHW16c, 4 output blocks x 7 pixels = 28 zmm
// accumulators and the weight vectors (the input values are broadcast from memory by the
// multiply-adds). 4x7 measured as fast as 4x6 on 56- to 14-wide rows and 1.1x on 7-wide
// ones, which it covers in one tile. Compiled with -mavx512f -mfma (see CMakeLists.txt).
#include "ops/kernels/blocked_conv_impl.h"
#include "ops/kernels/winograd_impl.h"

namespace minfer::kernels {

constinit const BlockedConvKernel blocked_conv_f32_4x7_avx512 = {
    "blocked_conv_f32_4x7_avx512",
    Isa::kAvx512,
    16,
    4,
    &blocked_conv_row<xsimd::batch<float, xsimd::avx512f>, 4, 7>,
    &winograd_input_tiles<xsimd::batch<float, xsimd::avx512f>>,
    &winograd_output_tiles<xsimd::batch<float, xsimd::avx512f>>};

}  // namespace minfer::kernels
