// The AVX2 + FMA target: 6 rows x 2 ymm columns = 12 accumulators, 2 B vectors and a
// broadcast in the 16 ymm registers. Compiled with -mavx2 -mfma (see CMakeLists.txt).
#include "ops/kernels/gemm_microkernel.h"

namespace minfer::kernels {

// Blocking for Zen 3 (32 KiB L1d, 512 KiB L2 per core): the B micro-panel kc x 16 floats
// is 16 KiB; the A block mc x kc is 168 KiB; see docs/performance.md for the tuning.
const GemmKernel gemm_f32_6x16_avx2 = {
    "gemm_f32_6x16_avx2", Isa::kAvx2, 6, 16, 168, 256, 4080, &run_block<xsimd::fma3<xsimd::avx2>, 6, 2>};

}  // namespace minfer::kernels
