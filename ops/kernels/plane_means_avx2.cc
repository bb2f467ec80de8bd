// The AVX2 target of the plane means (compiled with -mavx2 -mfma).
#include "ops/kernels/plane_means.h"
#include "ops/kernels/plane_means_impl.h"

namespace minfer::kernels {

constinit const PlaneMeans plane_means_avx2 = {"plane_means_avx2", Isa::kAvx2, &plane_means<xsimd::fma3<xsimd::avx2>>,
                                               &blocked_means<xsimd::fma3<xsimd::avx2>>};

}  // namespace minfer::kernels
