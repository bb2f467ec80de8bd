#include "ops/kernels/gemm_pack.h"

#include <algorithm>
#include <stdexcept>

#ifdef __SSE2__
#include <xmmintrin.h>
#endif

#include "ops/kernels/gemm.h"

namespace minfer::kernels {
namespace {

int64_t round_up(int64_t x, int64_t r) {
  return (x + r - 1) / r * r;
}

// The rows of a panel come from `width` <= R contiguous floats per k (the contiguous
// case: B as stored, or A stored transposed); R is a compile-time constant so the copy
// is a few vector moves.
template <int R>
void pack_contiguous(const float* src, int64_t ld, int64_t width, int64_t kc, bool zero_pad, float* dst) {
  if (width == R) {
    for (int64_t p = 0; p < kc; ++p, dst += R, src += ld) {
      for (int c = 0; c < R; ++c) dst[c] = src[c];
    }
  } else {
    for (int64_t p = 0; p < kc; ++p, dst += R, src += ld) {
      int c = 0;
      for (; c < width; ++c) dst[c] = src[c];
      if (zero_pad)
        for (; c < R; ++c) dst[c] = 0.0f;
    }
  }
}

// Each of the panel's `width` <= R lines is contiguous along k (A as stored, or B stored
// transposed): a transpose of a [width, kc] strip. Full panels go 4 k at a time through
// SSE 4x4 transposes (and a 2x4 interleave for R = 6), a quarter of the scalar loop's
// loads and stores: for a layer with few output pixels this packing is a large part of
// the GEMM.
template <int R>
void pack_strided(const float* src, int64_t ld, int64_t width, int64_t kc, bool zero_pad, float* dst) {
  int64_t p = 0;
#ifdef __SSE2__
  static_assert(R % 4 == 0 || R % 4 == 2);
  if (width == R) {
    for (; p + 4 <= kc; p += 4) {
      float* d = dst + p * R;
      for (int g = 0; g + 4 <= R; g += 4) {
        __m128 r0 = _mm_loadu_ps(src + (g + 0) * ld + p), r1 = _mm_loadu_ps(src + (g + 1) * ld + p);
        __m128 r2 = _mm_loadu_ps(src + (g + 2) * ld + p), r3 = _mm_loadu_ps(src + (g + 3) * ld + p);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        _mm_storeu_ps(d + g, r0);
        _mm_storeu_ps(d + R + g, r1);
        _mm_storeu_ps(d + 2 * R + g, r2);
        _mm_storeu_ps(d + 3 * R + g, r3);
      }
      if constexpr (R % 4 == 2) {
        constexpr int g = R - 2;
        const __m128 x = _mm_loadu_ps(src + g * ld + p), y = _mm_loadu_ps(src + (g + 1) * ld + p);
        const __m128 lo = _mm_unpacklo_ps(x, y), hi = _mm_unpackhi_ps(x, y);  // x0 y0 x1 y1, x2 y2 x3 y3
        _mm_storel_pi(reinterpret_cast<__m64*>(d + g), lo);
        _mm_storeh_pi(reinterpret_cast<__m64*>(d + R + g), lo);
        _mm_storel_pi(reinterpret_cast<__m64*>(d + 2 * R + g), hi);
        _mm_storeh_pi(reinterpret_cast<__m64*>(d + 3 * R + g), hi);
      }
    }
  }
#endif
  if (width < R) {
    // A narrow panel (the rows of a GEMV-like product): zero it in one pass, then copy
    // the lines, rather than zero-filling R - width floats for every k (one memset call
    // each, 256 per panel, that cost more than the product's own FMAs at M = 1).
    if (zero_pad) std::fill_n(dst + p * R, (kc - p) * R, 0.0f);
    for (int64_t c = 0; c < width; ++c)
      for (int64_t q = p; q < kc; ++q) dst[q * R + c] = src[c * ld + q];
    return;
  }
  for (dst += p * R; p < kc; ++p, dst += R)
    for (int c = 0; c < R; ++c) dst[c] = src[c * ld + p];
}

template <int R>
void pack_panels(const float* src, int64_t ld, bool contiguous, int64_t lines, int64_t kc, bool zero_pad, float* dst) {
  for (int64_t q = 0; q < lines; q += R, dst += R * kc) {
    const int64_t width = std::min<int64_t>(R, lines - q);
    if (contiguous)
      pack_contiguous<R>(src + q, ld, width, kc, zero_pad, dst);
    else
      pack_strided<R>(src + q * ld, ld, width, kc, zero_pad, dst);
  }
}

void pack_panels(int r, const float* src, int64_t ld, bool contiguous, int64_t lines, int64_t kc, bool zero_pad,
                 float* dst) {
  switch (r) {
    case 4: return pack_panels<4>(src, ld, contiguous, lines, kc, zero_pad, dst);
    case 6: return pack_panels<6>(src, ld, contiguous, lines, kc, zero_pad, dst);
    case 8: return pack_panels<8>(src, ld, contiguous, lines, kc, zero_pad, dst);
    case 12: return pack_panels<12>(src, ld, contiguous, lines, kc, zero_pad, dst);
    case 16: return pack_panels<16>(src, ld, contiguous, lines, kc, zero_pad, dst);
    case 32: return pack_panels<32>(src, ld, contiguous, lines, kc, zero_pad, dst);
  }
  throw std::logic_error("gemm packing: no instance for this tile size");
}

}  // namespace

void pack_a_block(const float* a, int64_t lda, bool trans, int64_t i0, int64_t rows, int64_t p0, int64_t kc, int mr,
                  float* dst, bool zero_pad) {
  // A[i, p] is at a[i * lda + p], op(A) = A^T's at a[p * lda + i].
  const float* src = trans ? a + p0 * lda + i0 : a + i0 * lda + p0;
  pack_panels(mr, src, lda, trans, rows, kc, zero_pad, dst);
}

void pack_b_block(const float* b, int64_t ldb, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t cols, int nr,
                  float* dst) {
  const float* src = trans ? b + j0 * ldb + p0 : b + p0 * ldb + j0;
  pack_panels(nr, src, ldb, !trans, cols, kc, true, dst);
}

PackedMatrix PackedMatrix::pack_a(const GemmKernel& kernel, const float* a, int64_t lda, bool trans, int64_t m,
                                  int64_t k, int64_t kc) {
  PackedMatrix p;
  p.kernel_ = &kernel;
  p.side_ = Side::kA;
  p.rows_ = m;
  p.cols_ = k;
  p.kc_ = kc > 0 ? kc : kernel.kc;
  p.padded_ = round_up(m, kernel.mr);
  p.buffer_ = AlignedBuffer(4 * p.padded_ * k);
  const KBlocks blocks(k, p.kc_);
  for (int64_t i = 0; i < blocks.count; ++i) {
    const int64_t k0 = blocks.begin(i), kb = blocks.length(i);
    pack_a_block(a, lda, trans, 0, m, k0, kb, kernel.mr, p.base() + k0 * p.padded_);
  }
  return p;
}

PackedMatrix PackedMatrix::pack_b(const GemmKernel& kernel, const float* b, int64_t ldb, bool trans, int64_t k,
                                  int64_t n, int64_t kc) {
  PackedMatrix p;
  p.kernel_ = &kernel;
  p.side_ = Side::kB;
  p.rows_ = k;
  p.cols_ = n;
  p.kc_ = kc > 0 ? kc : kernel.kc;
  p.padded_ = round_up(n, kernel.nr);
  p.buffer_ = AlignedBuffer(4 * p.padded_ * k);
  const KBlocks blocks(k, p.kc_);
  for (int64_t i = 0; i < blocks.count; ++i) {
    const int64_t k0 = blocks.begin(i), kb = blocks.length(i);
    pack_b_block(b, ldb, trans, k0, kb, 0, n, kernel.nr, p.base() + k0 * p.padded_);
  }
  return p;
}

}  // namespace minfer::kernels
