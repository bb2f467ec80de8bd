// The AVX-512 blocked convolution: NCHW16c, up to 4 output blocks x 7 pixels = 28 zmm
// accumulators and the weight vectors (a 4x7 tile's input values are broadcast from memory
// by the multiply-adds; narrower tiles broadcast into a register, see blocked_conv_impl.h).
// Wider rows run in 4x6 tiles, a 7-wide row in one 4x7 (1.1x faster than 4 + 3 on Zen 4).
// Compiled with -mavx512f -mfma (see CMakeLists.txt).
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
    &winograd_output_tiles<xsimd::batch<float, xsimd::avx512f>>,
    &copy_checking<xsimd::batch<float, xsimd::avx512f>>};

}  // namespace minfer::kernels
