// FmaPeakKernel for avx512f (compiled with -mavx512f; see CMakeLists.txt).
#include "profiler/fma_peak_kernel.h"

namespace minfer {

template float FmaPeakKernel::operator()<xsimd::avx512f>(xsimd::avx512f, int64_t) const;

}  // namespace minfer
