// The AVX-512 pools (16 output columns per vector). Compiled with -mavx512f -mfma.
#include "ops/kernels/pool2d_impl.h"

namespace minfer::kernels {

using Avx512Vec = xsimd::batch<float, xsimd::avx512f>;
constinit const Pool2dKernel pool2d_kernels_avx512[2] = {pool2d_kernel<Avx512Vec>(Isa::kAvx512, 1),
                                                         pool2d_kernel<Avx512Vec>(Isa::kAvx512, 2)};

}  // namespace minfer::kernels
