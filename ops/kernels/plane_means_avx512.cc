// The AVX-512 target of the plane means (compiled with -mavx512f -mfma).
#include "ops/kernels/plane_means.h"
#include "ops/kernels/plane_means_impl.h"

namespace minfer::kernels {

constinit const PlaneMeans plane_means_avx512 = {"plane_means_avx512", Isa::kAvx512, &plane_means<xsimd::avx512f>,
                                                 &blocked_means<xsimd::avx512f>};

}  // namespace minfer::kernels
