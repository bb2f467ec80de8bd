#include "ops/kernels/transpose.h"

#ifdef __SSE2__
#include <xmmintrin.h>
#endif

namespace minfer::kernels {

void transpose(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float* dst, int64_t dst_ld) {
  int64_t i = 0;
#ifdef __SSE2__
  for (; i + 4 <= rows; i += 4) {
    const float* s = src + i * src_ld;
    int64_t j = 0;
    for (; j + 4 <= cols; j += 4) {
      __m128 r0 = _mm_loadu_ps(s + j), r1 = _mm_loadu_ps(s + src_ld + j);
      __m128 r2 = _mm_loadu_ps(s + 2 * src_ld + j), r3 = _mm_loadu_ps(s + 3 * src_ld + j);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(dst + j * dst_ld + i, r0);
      _mm_storeu_ps(dst + (j + 1) * dst_ld + i, r1);
      _mm_storeu_ps(dst + (j + 2) * dst_ld + i, r2);
      _mm_storeu_ps(dst + (j + 3) * dst_ld + i, r3);
    }
    for (; j < cols; ++j)
      for (int64_t r = i; r < i + 4; ++r) dst[j * dst_ld + r] = src[r * src_ld + j];
  }
#endif
  for (; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[j * dst_ld + i] = src[i * src_ld + j];
}

}  // namespace minfer::kernels
