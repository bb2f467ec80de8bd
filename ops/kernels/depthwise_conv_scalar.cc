// The portable depthwise kernels: the same template over one float, for CPUs without
// AVX2 (and as the baseline the SIMD targets are measured against).
#include "ops/kernels/depthwise_conv_impl.h"

namespace minfer::kernels {

constinit const std::array<DepthwiseKernel, kDepthwiseWindows> depthwise_kernels_scalar =
    depthwise_kernel_table<ScalarVec>(
        Isa::kScalar, {"depthwise_f32_3x3s1_scalar", "depthwise_f32_3x3s2_scalar", "depthwise_f32_5x5s1_scalar",
                       "depthwise_f32_5x5s2_scalar", "depthwise_f32_7x7s1_scalar", "depthwise_f32_7x7s2_scalar"});

}  // namespace minfer::kernels
