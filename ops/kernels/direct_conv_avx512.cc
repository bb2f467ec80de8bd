// The AVX-512 direct convolutions: 4 or 8 output channels x 3 zmm vectors (48 columns).
// Compiled with -mavx512f -mfma (see CMakeLists.txt). 4x3 measured fastest of 4x3, 8x3,
// 4x4 and 8x2 on Zen 4, whose one 512-bit FMA pipe 12 accumulators keep busy; on Zen 5
// (two pipes) 8x3 ran MobileNet's and ResNet's first layers in 0.68-0.70x 4x3's time, 6x4
// 0.81-0.84x, 4x5 0.74-0.76x, 4x4 0.75-0.78x, 8x2 0.79-0.91x (conv_bench first_layer,
// medians of 5 interleaved rounds).
#include "ops/kernels/direct_conv_impl.h"

namespace minfer::kernels {

constinit const DirectConvKernel direct_conv_f32_4x48_avx512 = {
    "direct_conv_f32_4x48_avx512", Isa::kAvx512, 16, &direct_conv_rows<xsimd::batch<float, xsimd::avx512f>, 4, 3>};
constinit const DirectConvKernel direct_conv_f32_8x48_avx512 = {
    "direct_conv_f32_8x48_avx512", Isa::kAvx512, 16, &direct_conv_rows<xsimd::batch<float, xsimd::avx512f>, 8, 3>};

}  // namespace minfer::kernels
