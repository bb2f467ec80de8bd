// The AVX2 + FMA blocked convolution: NCHW8c, 2 output blocks x 6 pixels = 12 ymm
// accumulators, 2 weight vectors and a broadcast input in the 16 ymm registers. Compiled
// with -mavx2 -mfma (see CMakeLists.txt).
#include "ops/kernels/blocked_conv_impl.h"
#include "ops/kernels/winograd_impl.h"

namespace minfer::kernels {

constinit const BlockedConvKernel blocked_conv_f32_2x6_avx2 = {
    "blocked_conv_f32_2x6_avx2",
    Isa::kAvx2,
    8,
    2,
    &blocked_conv_row<xsimd::batch<float, xsimd::fma3<xsimd::avx2>>, 2, 6>,
    &winograd_input_tiles<xsimd::batch<float, xsimd::fma3<xsimd::avx2>>>,
    &winograd_output_tiles<xsimd::batch<float, xsimd::fma3<xsimd::avx2>>>,
    &copy_checking<xsimd::batch<float, xsimd::fma3<xsimd::avx2>>>};

}  // namespace minfer::kernels
