// The AVX-512 depthwise kernels (16 output columns per vector). Compiled with -mavx512f
// -mfma (see CMakeLists.txt). Built and dispatched, but not run on the development
// machine (Zen 3 has no AVX-512): its code is the AVX2 kernels' template.
#include "ops/kernels/depthwise_conv_impl.h"

namespace minfer::kernels {

constinit const std::array<DepthwiseKernel, 4> depthwise_kernels_avx512 =
    depthwise_kernel_table<xsimd::batch<float, xsimd::avx512f>>(
        Isa::kAvx512, "depthwise_f32_3x3s1_avx512", "depthwise_f32_3x3s2_avx512", "depthwise_f32_5x5s1_avx512",
        "depthwise_f32_5x5s2_avx512");

}  // namespace minfer::kernels
