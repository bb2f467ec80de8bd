// The AVX2 direct pointwise kernel: 4 output channels x 3 vectors of 8 pixels, 12
// accumulators, 3 input vectors and a broadcast weight of the 16 ymm registers.
// Compiled with -mavx2 -mfma (see CMakeLists.txt).
#include "ops/kernels/pointwise_conv_impl.h"

namespace minfer::kernels {

constinit const PointwiseKernel pointwise_kernel_avx2 =
    pointwise_kernel<Avx2Vec, 4, 3>(Isa::kAvx2, "pointwise_f32_4x3_avx2");

}  // namespace minfer::kernels
