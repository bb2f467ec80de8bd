// The vector vocabulary the direct convolution kernels are written in, once for every
// target: xsimd batches for the SIMD targets and a one-lane ScalarVec for the portable
// one. Included only by the per-target translation units (*_avx2.cc, *_avx512.cc,
// *_scalar.cc); everything has internal linkage so no target's code can be merged into
// another's by the linker.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <xsimd/xsimd.hpp>

#include "ops/kernels/activation_math.h"

namespace minfer::kernels {
namespace {

// The portable target: the same kernel templates over one float.
struct ScalarVec {
  static constexpr std::size_t size = 1;
  float v = 0.0f;
  ScalarVec() = default;
  ScalarVec(float x) : v(x) {}  // NOLINT: broadcasts like xsimd::batch's constructor
  static ScalarVec load_unaligned(const float* p) { return ScalarVec(*p); }
  void store_unaligned(float* p) const { *p = v; }
};

inline ScalarVec multiply_add(ScalarVec a, ScalarVec b, ScalarVec c) {
  return ScalarVec(a.v * b.v + c.v);
}

template <class Arch>
inline xsimd::batch<float, Arch> multiply_add(xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b,
                                              xsimd::batch<float, Arch> c) {
  return fused_multiply_add<Arch>(a, b, c);
}

// c + a * (*b broadcast to every lane). On AVX-512 the broadcast is the multiply-add's
// memory operand ({1to16}), which needs no register: GCC otherwise broadcasts into a
// register first, and a tile that uses all 32 (the blocked convolution's 4x7) spilled an
// accumulator per input channel and all of them per kernel row. The asm takes b's address
// in a register and does not declare the read (as a memory operand GCC kept every
// accumulator in memory): *b must not be written in the calling function, only before
// it is called (the kernels read inputs their callers wrote before an indirect call).
template <class V>
inline V multiply_add_broadcast(V a, const float* b, V c) {
#ifdef __AVX512F__
  if constexpr (std::is_same_v<V, xsimd::batch<float, xsimd::avx512f>>) {
    __m512 sum = c;
    asm("vfmadd231ps (%[b])%{1to16%}, %[a], %[sum]" : [sum] "+v"(sum) : [a] "v"(static_cast<__m512>(a)), [b] "r"(b));
    return sum;
  }
#endif
  return multiply_add(a, V(*b), c);
}

// An unaligned load GCC must keep in a register: where a loaded vector feeds several
// multiply-adds, GCC otherwise folds the load into each of them as its memory operand,
// loading the vector once per use.
template <class V>
inline V load_to_register(const float* p) {
  V x = V::load_unaligned(p);
  if constexpr (!std::is_same_v<V, ScalarVec>) {
    typename V::register_type r = x;
    asm("" : "+v"(r));
    return V(r);
  }
  return x;
}

// As the vector max and min: b when either is NaN (or they are equal).
inline ScalarVec max(ScalarVec a, ScalarVec b) {
  return a.v > b.v ? a : b;
}
inline ScalarVec min(ScalarVec a, ScalarVec b) {
  return a.v < b.v ? a : b;
}
inline ScalarVec leaky(ScalarVec x, ScalarVec alpha) {
  return ScalarVec(x.v < 0.0f ? alpha.v * x.v : x.v);
}
// The portable target's activations, with the formulas of vector_activations.cc's, so
// the registers' and the stored row's results agree.
inline float clamp01(float v) {
  return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}
inline ScalarVec sigmoid_of(ScalarVec x) {
  return ScalarVec(1.0f / (1.0f + std::exp(-x.v)));
}
inline ScalarVec swish_of(ScalarVec x, ScalarVec alpha) {
  return ScalarVec(x.v / (1.0f + std::exp(-alpha.v * x.v)));
}
inline ScalarVec hard_sigmoid_of(ScalarVec x, ScalarVec alpha, ScalarVec beta) {
  return ScalarVec(clamp01(alpha.v * x.v + beta.v));
}
inline ScalarVec hard_swish_of(ScalarVec x) {
  return ScalarVec(x.v * clamp01(x.v / 6.0f + 0.5f));
}

template <class Arch>
inline xsimd::batch<float, Arch> leaky(xsimd::batch<float, Arch> x, xsimd::batch<float, Arch> alpha) {
  return xsimd::select(x < xsimd::batch<float, Arch>(0.0f), x * alpha, x);
}

// What with_activation hands its body: activate(x) is the activation of one vector,
// activate_all<N>(activate, x) that of N in place. Kind is a template argument so that
// activate_all picks its form at compile time.
template <class V, ActivationKind Kind, class One>
struct Activate {
  One one;
  V alpha;  // Swish's
  V operator()(V x) const { return one(x); }
};

template <class V, ActivationKind Kind, class One>
Activate<V, Kind, One> activate_with(One one, V alpha = V(1.0f)) {
  return {one, alpha};
}

// Whether activate_all steps an Activate's vectors together (the exponential kinds on a
// SIMD target). Kernels that finish one output vector at a time activate those kinds
// over a span of their outputs afterwards (activate_span), so the steps interleave.
template <class A>
inline constexpr bool kActivatesInGroups = false;
template <class V, ActivationKind Kind, class One>
inline constexpr bool kActivatesInGroups<Activate<V, Kind, One>> = (Kind == ActivationKind::kSigmoid ||
                                                                    Kind == ActivationKind::kSwish) &&
                                                                   !std::is_same_v<V, ScalarVec>;

// x[0..N) through activate in place: the exponential kinds four vectors at a time, their
// steps interleaved (activation_math.h's exponential_n).
template <int N, class V, ActivationKind Kind, class One>
[[gnu::always_inline]] inline void activate_all(const Activate<V, Kind, One>& activate, V* x) {
  if constexpr (kActivatesInGroups<Activate<V, Kind, One>>) {
    exponential_n<typename V::arch_type, Kind, N>(x, activate.alpha);
  } else {
#pragma GCC unroll 16
    for (int k = 0; k < N; ++k) x[k] = activate(x[k]);
  }
}

// y[0..n) through activate in place: four vectors at a time, then one, then the last
// partial vector through a zero-padded copy.
template <class V, ActivationKind Kind, class One>
[[gnu::always_inline]] inline void activate_span(const Activate<V, Kind, One>& activate, float* y, int64_t n) {
  constexpr int64_t W = V::size;
  constexpr int G = 4;
  int64_t i = 0;
  for (; i + G * W <= n; i += G * W) {
    V x[G];
#pragma GCC unroll 16
    for (int k = 0; k < G; ++k) x[k] = V::load_unaligned(y + i + k * W);
    activate_all<G>(activate, x);
#pragma GCC unroll 16
    for (int k = 0; k < G; ++k) x[k].store_unaligned(y + i + k * W);
  }
  for (; i + W <= n; i += W) activate(V::load_unaligned(y + i)).store_unaligned(y + i);
  if (i == n) return;
  alignas(64) float tail[W] = {};
  std::copy(y + i, y + n, tail);
  activate(V::load_unaligned(tail)).store_unaligned(tail);
  std::copy(tail, tail + (n - i), y + i);
}

// Calls body(activate) (an Activate above), which applies act on the registers (the
// identity for the kinds that are not activation_in_registers). The switch runs once, so
// the loops inside body are compiled once per kind with no branch on it. Always inlined:
// called out of line (as GCC chose once the exponential kinds made it large), body's
// captures are read through memory after every store, and the depthwise loops measured
// 20% slower without an activation (AVX-512).
template <class V, class Body>
[[gnu::always_inline]] inline void with_activation(const Activation& act, Body&& body) {
  using K = ActivationKind;
  switch (act.kind) {
    // x second: max and min return it when it is NaN, so a NaN stays NaN as in
    // Activation::apply.
    case K::kRelu: body(activate_with<V, K::kRelu>([](V x) { return max(V(0.0f), x); })); return;
    case K::kClip: {
      const V lo(act.alpha), hi(act.beta);
      body(activate_with<V, K::kClip>([lo, hi](V x) { return min(hi, max(lo, x)); }));
      return;
    }
    case K::kLeakyRelu: {
      const V alpha(act.alpha);
      body(activate_with<V, K::kLeakyRelu>([alpha](V x) { return leaky(x, alpha); }));
      return;
    }
    case K::kSigmoid: body(activate_with<V, K::kSigmoid>([](V x) { return sigmoid_of(x); })); return;
    case K::kHardSigmoid: {
      const V alpha(act.alpha), beta(act.beta);
      body(activate_with<V, K::kHardSigmoid>([alpha, beta](V x) { return hard_sigmoid_of(x, alpha, beta); }));
      return;
    }
    case K::kHardSwish: body(activate_with<V, K::kHardSwish>([](V x) { return hard_swish_of(x); })); return;
    case K::kSwish: {
      const V alpha(act.alpha);
      body(activate_with<V, K::kSwish>([alpha](V x) { return swish_of(x, alpha); }, alpha));
      return;
    }
    default: body(activate_with<V, K::kNone>([](V x) { return x; }));
  }
}

// Splits the 2 * size floats at src into their even- and odd-indexed elements.
inline void deinterleave(const float* src, float* even, float* odd) {
  *even = src[0];
  *odd = src[1];
}
// The even- (Odd 0) or odd-indexed (Odd 1) floats of the 2 * size floats in a, b.
#if XSIMD_WITH_AVX512F
template <int Odd>
inline __m512 alternate_avx512(__m512 a, __m512 b) {
  const __m512i index = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(a, _mm512_add_epi32(index, _mm512_set1_epi32(Odd)), b);
}
inline void deinterleave_avx512(const float* src, float* even, float* odd) {
  const __m512 a = _mm512_loadu_ps(src), b = _mm512_loadu_ps(src + 16);
  _mm512_storeu_ps(even, alternate_avx512<0>(a, b));
  _mm512_storeu_ps(odd, alternate_avx512<1>(a, b));
}
#endif
#if XSIMD_WITH_AVX2
template <int Odd>
inline __m256 alternate_avx2(__m256 a, __m256 b) {
  // Within 128-bit lanes: [a0 a2 b0 b2 | a4 a6 b4 b6]; then swap the middle 64-bit pairs.
  const __m256 lanes = _mm256_shuffle_ps(a, b, Odd ? 0xdd : 0x88);
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(lanes), 0xd8));
}
inline void deinterleave_avx2(const float* src, float* even, float* odd) {
  const __m256 a = _mm256_loadu_ps(src), b = _mm256_loadu_ps(src + 8);
  _mm256_storeu_ps(even, alternate_avx2<0>(a, b));
  _mm256_storeu_ps(odd, alternate_avx2<1>(a, b));
}
#endif
// The 4-pair step the SIMD targets use for the rest of a short row (SSE: every x86-64).
inline void deinterleave_4(const float* src, float* even, float* odd) {
  const __m128 a = _mm_loadu_ps(src), b = _mm_loadu_ps(src + 4);
  _mm_storeu_ps(even, _mm_shuffle_ps(a, b, 0x88));
  _mm_storeu_ps(odd, _mm_shuffle_ps(a, b, 0xdd));
}

template <class V>
inline void deinterleave_vector(const float* src, float* even, float* odd) {
  if constexpr (V::size == 1) deinterleave(src, even, odd);
#if XSIMD_WITH_AVX512F
  else if constexpr (V::size == 16)
    deinterleave_avx512(src, even, odd);
#endif
#if XSIMD_WITH_AVX2
  else if constexpr (V::size == 8)
    deinterleave_avx2(src, even, odd);
#endif
  else
    static_assert(V::size == 1, "no deinterleave for this vector width");
}

// Copies n floats from src to dst (not overlapping) in whole vectors, the rest as one
// vector ending at n, or for n < V::size two overlapping pieces of 8 or 4 floats: no
// per-float loop and no call to memcpy for the short rows of small planes.
template <class V>
inline void copy_floats(const float* src, int64_t n, float* dst) {
  constexpr int64_t W = V::size;
  if (n >= W) {
    int64_t i = 0;
    for (; i + W <= n; i += W) V::load_unaligned(src + i).store_unaligned(dst + i);
    if (i < n) V::load_unaligned(src + n - W).store_unaligned(dst + n - W);
  } else if (W > 8 && n >= 8) {
    std::memcpy(dst, src, 8 * sizeof(float));
    std::memcpy(dst + n - 8, src + n - 8, 8 * sizeof(float));
  } else if (W > 4 && n >= 4) {
    std::memcpy(dst, src, 4 * sizeof(float));
    std::memcpy(dst + n - 4, src + n - 4, 4 * sizeof(float));
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// Stores the first n (< V::size) lanes: the tail of a row.
template <class V>
inline void store_first(V x, float* p, int64_t n) {
  float lanes[V::size];
  x.store_unaligned(lanes);
  std::memcpy(p, lanes, static_cast<size_t>(n) * sizeof(float));
}

}  // namespace
}  // namespace minfer::kernels
