// The AVX-512 batch-1 product: groups of 4 panels of 2 zmm (128 columns), 8 accumulators.
#include "ops/kernels/gemv_microkernel.h"

namespace minfer::kernels {

void gemv_avx512(const GemvCall& call) {
  run_gemv<xsimd::avx512f, 2>(call);
}

}  // namespace minfer::kernels
