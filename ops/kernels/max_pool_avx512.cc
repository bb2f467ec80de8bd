// The AVX-512 max pool (16 output columns per vector). Compiled with -mavx512f -mfma.
#include "ops/kernels/max_pool_impl.h"

namespace minfer::kernels {

using Avx512Vec = xsimd::batch<float, xsimd::avx512f>;
constinit const MaxPoolKernel max_pool_kernels_avx512[2] = {max_pool_kernel<Avx512Vec>(Isa::kAvx512, 1),
                                                            max_pool_kernel<Avx512Vec>(Isa::kAvx512, 2)};

}  // namespace minfer::kernels
