#include "ops/kernels/transpose.h"

#ifdef __SSE2__
#include <xmmintrin.h>
#endif

namespace minfer::kernels {

void transpose(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float* dst, int64_t dst_ld,
               const float* addend) {
  const auto element = [&](int64_t i, int64_t j) {
    const float v = src[i * src_ld + j];
    dst[j * dst_ld + i] = addend ? v + addend[j * dst_ld + i] : v;
  };
  int64_t i = 0;
#ifdef __SSE2__
  for (; i + 4 <= rows; i += 4) {
    const float* s = src + i * src_ld;
    int64_t j = 0;
    for (; j + 4 <= cols; j += 4) {
      __m128 r[4] = {_mm_loadu_ps(s + j), _mm_loadu_ps(s + src_ld + j), _mm_loadu_ps(s + 2 * src_ld + j),
                     _mm_loadu_ps(s + 3 * src_ld + j)};
      _MM_TRANSPOSE4_PS(r[0], r[1], r[2], r[3]);
      for (int64_t k = 0; k < 4; ++k) {
        float* d = dst + (j + k) * dst_ld + i;
        if (addend) r[k] = _mm_add_ps(r[k], _mm_loadu_ps(addend + (j + k) * dst_ld + i));
        _mm_storeu_ps(d, r[k]);
      }
    }
    for (; j < cols; ++j)
      for (int64_t r = i; r < i + 4; ++r) element(r, j);
  }
#endif
  for (; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) element(i, j);
}

}  // namespace minfer::kernels
