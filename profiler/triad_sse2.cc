// TriadKernel for sse2 (compiled with the baseline flags; see CMakeLists.txt).
#include "profiler/triad_kernel.h"

namespace minfer {

template void TriadKernel::operator()<xsimd::sse2>(xsimd::sse2, float*, const float*, const float*, size_t, float,
                                                   int) const;

}  // namespace minfer
