// Square register transposes and partial loads and stores for the SIMD targets: how the
// channels-in-lanes depthwise kernel (depthwise_conv_lanes_impl.h) moves V::size channel
// planes (NCHW) into pixel vectors of V::size channels and back. In registers, unlike
// kernels::transpose (transpose.h, memory to memory in 4x4 SSE blocks): the output
// pixels are transposed between the multiply-adds and the activation, never stored
// pixel-major. Included only by the per-target translation units; internal linkage.
#pragma once

#include <cstdint>
#include <xsimd/xsimd.hpp>

namespace minfer::kernels {
namespace {

#if XSIMD_WITH_AVX512F
using Avx512Vec = xsimd::batch<float, xsimd::avx512f>;

// r[i] lane j becomes r[j] lane i. A 4x4 transpose inside each 128-bit lane of every
// group of four rows, then a 4x4 transpose of the 128-bit lanes across the groups.
inline void transpose_square(Avx512Vec (&r)[16]) {
  __m512 u[16];
  for (int g = 0; g < 16; g += 4) {
    const __m512 t0 = _mm512_unpacklo_ps(r[g], r[g + 1]), t1 = _mm512_unpackhi_ps(r[g], r[g + 1]);
    const __m512 t2 = _mm512_unpacklo_ps(r[g + 2], r[g + 3]), t3 = _mm512_unpackhi_ps(r[g + 2], r[g + 3]);
    u[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    u[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    u[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    u[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
  }
  // u[4g + j] lane k holds column 4k + j of rows 4g..4g+3.
  for (int j = 0; j < 4; ++j) {
    const __m512 s0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x44), s1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xee);
    const __m512 s2 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x44);
    const __m512 s3 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xee);
    r[j] = _mm512_shuffle_f32x4(s0, s2, 0x88);
    r[4 + j] = _mm512_shuffle_f32x4(s0, s2, 0xdd);
    r[8 + j] = _mm512_shuffle_f32x4(s1, s3, 0x88);
    r[12 + j] = _mm512_shuffle_f32x4(s1, s3, 0xdd);
  }
}

// The first n (< 16) floats at p, the other lanes 0; reads nothing past p + n.
inline Avx512Vec load_first_n(const float* p, int64_t n, Avx512Vec) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
}
inline void store_first_n(Avx512Vec x, float* p, int64_t n) {
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), x);
}
#endif

#if XSIMD_WITH_AVX2
using Avx2Vec = xsimd::batch<float, xsimd::fma3<xsimd::avx2>>;

inline void transpose_square(Avx2Vec (&r)[8]) {
  __m256 u[8];
  for (int g = 0; g < 8; g += 4) {
    const __m256 t0 = _mm256_unpacklo_ps(r[g], r[g + 1]), t1 = _mm256_unpackhi_ps(r[g], r[g + 1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[g + 2], r[g + 3]), t3 = _mm256_unpackhi_ps(r[g + 2], r[g + 3]);
    u[g] = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    u[g + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    u[g + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    u[g + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
    r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
  }
}

inline __m256i first_n_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline Avx2Vec load_first_n(const float* p, int64_t n, Avx2Vec) {
  return _mm256_maskload_ps(p, first_n_mask(n));
}
inline void store_first_n(Avx2Vec x, float* p, int64_t n) {
  _mm256_maskstore_ps(p, first_n_mask(n), x);
}
#endif

}  // namespace
}  // namespace minfer::kernels
