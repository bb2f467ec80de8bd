// The AVX-512 target: 12 rows x 2 zmm columns = 24 accumulators of the 32 zmm registers.
// Compiled with -mavx512f -mfma (see CMakeLists.txt). Built and dispatched, but not run
// on the development machine (Zen 3 has no AVX-512): its code is the AVX2 kernel's
// template, and its blocking is untuned.
#include "ops/kernels/gemm_microkernel.h"

namespace minfer::kernels {

// The B micro-panel kc x 32 floats is 24 KiB, the A block mc x kc 144 KiB.
const GemmKernel gemm_f32_12x32_avx512 = {"gemm_f32_12x32_avx512",          Isa::kAvx512, 12, 32, 144, 192, 3072,
                                          &run_block<xsimd::avx512f, 12, 2>};

}  // namespace minfer::kernels
