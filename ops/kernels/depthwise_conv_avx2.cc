// The AVX2 + FMA depthwise kernels (8 output columns, or 8 channels, per vector).
// Compiled with -mavx2 -mfma (see CMakeLists.txt).
#include "ops/kernels/depthwise_conv_impl.h"
#include "ops/kernels/depthwise_conv_lanes_impl.h"

namespace minfer::kernels {

constinit const std::array<DepthwiseKernel, 2 * kDepthwiseWindows> depthwise_kernels_avx2 = with_lanes_kernels(
    depthwise_kernel_table<Avx2Vec>(
        Isa::kAvx2, {"depthwise_f32_3x3s1_avx2", "depthwise_f32_3x3s2_avx2", "depthwise_f32_5x5s1_avx2",
                     "depthwise_f32_5x5s2_avx2", "depthwise_f32_7x7s1_avx2", "depthwise_f32_7x7s2_avx2"}),
    depthwise_lanes_kernel_table<Avx2Vec>(
        Isa::kAvx2,
        {"depthwise_f32_3x3s1_lanes_avx2", "depthwise_f32_3x3s2_lanes_avx2", "depthwise_f32_5x5s1_lanes_avx2",
         "depthwise_f32_5x5s2_lanes_avx2", "depthwise_f32_7x7s1_lanes_avx2", "depthwise_f32_7x7s2_lanes_avx2"}));

}  // namespace minfer::kernels
