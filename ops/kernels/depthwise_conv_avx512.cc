// The AVX-512 depthwise kernels (16 output columns, or 16 channels, per vector).
// Compiled with -mavx512f -mfma (see CMakeLists.txt).
#include "ops/kernels/depthwise_conv_impl.h"
#include "ops/kernels/depthwise_conv_lanes_impl.h"

namespace minfer::kernels {

constinit const std::array<DepthwiseKernel, 2 * kDepthwiseWindows> depthwise_kernels_avx512 = with_lanes_kernels(
    depthwise_kernel_table<Avx512Vec>(
        Isa::kAvx512, {"depthwise_f32_3x3s1_avx512", "depthwise_f32_3x3s2_avx512", "depthwise_f32_5x5s1_avx512",
                       "depthwise_f32_5x5s2_avx512", "depthwise_f32_7x7s1_avx512", "depthwise_f32_7x7s2_avx512"}),
    depthwise_lanes_kernel_table<Avx512Vec>(
        Isa::kAvx512,
        {"depthwise_f32_3x3s1_lanes_avx512", "depthwise_f32_3x3s2_lanes_avx512", "depthwise_f32_5x5s1_lanes_avx512",
         "depthwise_f32_5x5s2_lanes_avx512", "depthwise_f32_7x7s1_lanes_avx512", "depthwise_f32_7x7s2_lanes_avx512"}));

}  // namespace minfer::kernels
