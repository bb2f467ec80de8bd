// The AVX-512 direct convolution: 4 output channels x 3 zmm vectors (48 columns).
// Compiled with -mavx512f -mfma (see CMakeLists.txt). The tile measured fastest of 4x3,
// 8x3, 4x4 and 8x2 on Zen 4 (MobileNet's and ResNet's first layers, conv_bench).
#include "ops/kernels/direct_conv_impl.h"

namespace minfer::kernels {

constinit const DirectConvKernel direct_conv_f32_4x48_avx512 = {
    "direct_conv_f32_4x48_avx512", Isa::kAvx512, 16, &direct_conv_rows<xsimd::batch<float, xsimd::avx512f>, 4, 3>};

}  // namespace minfer::kernels
