// TriadKernel for fma3<avx2> (compiled with -mavx2 -mfma; see CMakeLists.txt).
#include "profiler/triad_kernel.h"

namespace minfer {

template void TriadKernel::operator()<xsimd::fma3<xsimd::avx2>>(xsimd::fma3<xsimd::avx2>, float*, const float*,
                                                                const float*, size_t, float, int) const;

}  // namespace minfer
