// The AVX-512 target: 12 rows x 2 zmm columns = 24 accumulators of the 32 zmm registers,
// the AVX2 kernel's template at twice the width. Compiled with -mavx512f -mfma (see
// CMakeLists.txt); measured on AMD Zen 4 (docs/performance.md): the k loop runs its FMAs
// back to back, and kc = 1024 measured within the noise of 192 on whole models.
#include "ops/kernels/gemm_microkernel.h"

namespace minfer::kernels {

// The B micro-panel kc x 32 floats is 24 KiB, the A block mc x kc 144 KiB.
const GemmKernel gemm_f32_12x32_avx512 = {"gemm_f32_12x32_avx512",          Isa::kAvx512, 12, 32, 144, 192, 3072,
                                          &run_block<xsimd::avx512f, 12, 2>};

}  // namespace minfer::kernels
