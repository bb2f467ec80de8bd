// FmaPeakKernel for fma3<avx2> (compiled with -mavx2 -mfma; see CMakeLists.txt).
#include "profiler/fma_peak_kernel.h"

namespace minfer {

template float FmaPeakKernel::operator()<xsimd::fma3<xsimd::avx2>>(xsimd::fma3<xsimd::avx2>, int64_t) const;

}  // namespace minfer
