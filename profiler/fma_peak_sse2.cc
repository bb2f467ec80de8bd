// FmaPeakKernel for sse2 (compiled with the baseline flags; see CMakeLists.txt).
#include "profiler/fma_peak_kernel.h"

namespace minfer {

template float FmaPeakKernel::operator()<xsimd::sse2>(xsimd::sse2, int64_t) const;

}  // namespace minfer
