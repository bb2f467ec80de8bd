// The AVX2 + FMA direct convolution: 4 output channels x 3 ymm vectors (24 columns) = 12
// accumulators, 3 input vectors and a broadcast weight in the 16 ymm registers. Compiled
// with -mavx2 -mfma (see CMakeLists.txt).
#include "ops/kernels/direct_conv_impl.h"

namespace minfer::kernels {

constinit const DirectConvKernel direct_conv_f32_4x24_avx2 = {
    "direct_conv_f32_4x24_avx2", Isa::kAvx2, 8, &direct_conv_rows<xsimd::batch<float, xsimd::fma3<xsimd::avx2>>, 4, 3>};

}  // namespace minfer::kernels
