// The definition of TriadKernel, included only by the per-ISA triad_<isa>.cc files.
#pragma once

#include "profiler/triad.h"

namespace minfer {

template <class Arch>
void TriadKernel::operator()(Arch, float* a, const float* b, const float* c, size_t n, float s, int repeats) const {
  using Batch = xsimd::batch<float, Arch>;
  const Batch scale(s);
  const size_t vector_end = n - n % Batch::size;
  for (int r = 0; r < repeats; ++r) {
    for (size_t i = 0; i < vector_end; i += Batch::size)
      xsimd::fma(Batch::load_unaligned(c + i), scale, Batch::load_unaligned(b + i)).store_unaligned(a + i);
    for (size_t i = vector_end; i < n; ++i) a[i] = b[i] + s * c[i];
    // Each pass must store again: without this the compiler may keep only the last.
    asm volatile("" : : "r"(a) : "memory");
  }
}

}  // namespace minfer
