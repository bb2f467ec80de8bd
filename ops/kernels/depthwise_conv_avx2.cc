// The AVX2 + FMA depthwise kernels (8 output columns per vector). Compiled with -mavx2
// -mfma (see CMakeLists.txt).
#include "ops/kernels/depthwise_conv_impl.h"

namespace minfer::kernels {

constinit const std::array<DepthwiseKernel, 4> depthwise_kernels_avx2 =
    depthwise_kernel_table<xsimd::batch<float, xsimd::fma3<xsimd::avx2>>>(
        Isa::kAvx2, "depthwise_f32_3x3s1_avx2", "depthwise_f32_3x3s2_avx2", "depthwise_f32_5x5s1_avx2",
        "depthwise_f32_5x5s2_avx2");

}  // namespace minfer::kernels
