// The AVX-512 direct pointwise kernel: 6 output channels x 3 vectors of 16 pixels, 18
// accumulators, 3 input vectors and a broadcast weight of the 32 zmm registers (the
// fastest of 4x4 to 9x2 tiles on MobileNet and EfficientNet shapes, Zen 4:
// docs/performance.md); a last partial vector of up to 8 pixels summed in AVX2 vectors
// (pointwise_conv_impl.h's TailSums: 14x14 layers 1-2% faster on Zen 4). Compiled with
// -mavx512f -mfma (see CMakeLists.txt).
#include "ops/kernels/pointwise_conv_impl.h"

namespace minfer::kernels {

constinit const PointwiseKernel pointwise_kernel_avx512 =
    pointwise_kernel<Avx512Vec, 6, 3>(Isa::kAvx512, "pointwise_f32_6x3_avx512");

}  // namespace minfer::kernels
