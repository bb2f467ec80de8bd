// The AVX2 pools (8 output columns per vector). Compiled with -mavx2 -mfma.
#include "ops/kernels/pool2d_impl.h"

namespace minfer::kernels {

using Avx2Vec = xsimd::batch<float, xsimd::avx2>;
constinit const Pool2dKernel pool2d_kernels_avx2[2] = {pool2d_kernel<Avx2Vec>(Isa::kAvx2, 1),
                                                       pool2d_kernel<Avx2Vec>(Isa::kAvx2, 2)};

}  // namespace minfer::kernels
