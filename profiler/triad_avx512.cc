// TriadKernel for avx512f (compiled with -mavx512f -mfma; see CMakeLists.txt).
#include "profiler/triad_kernel.h"

namespace minfer {

template void TriadKernel::operator()<xsimd::avx512f>(xsimd::avx512f, float*, const float*, const float*, size_t, float,
                                                      int) const;

}  // namespace minfer
