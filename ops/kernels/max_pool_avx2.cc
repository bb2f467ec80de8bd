// The AVX2 max pool (8 output columns per vector). Compiled with -mavx2 -mfma.
#include "ops/kernels/max_pool_impl.h"

namespace minfer::kernels {

using Avx2Vec = xsimd::batch<float, xsimd::avx2>;
constinit const MaxPoolKernel max_pool_kernels_avx2[2] = {max_pool_kernel<Avx2Vec>(Isa::kAvx2, 1),
                                                          max_pool_kernel<Avx2Vec>(Isa::kAvx2, 2)};

}  // namespace minfer::kernels
