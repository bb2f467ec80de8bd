// The AVX2 batch-1 product: groups of 4 panels of 2 ymm (64 columns), 8 accumulators.
#include "ops/kernels/gemv_microkernel.h"

namespace minfer::kernels {

void gemv_avx2(const GemvCall& call) {
  run_gemv<xsimd::fma3<xsimd::avx2>, 2>(call);
}

}  // namespace minfer::kernels
