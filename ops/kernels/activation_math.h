// The activations over xsimd batches, once for every SIMD target: the vector activations
// (vector_activations_impl.h) and the epilogues that apply them on the registers before
// the store (gemm_microkernel.h, simd.h) use these, so a value's bits do not depend on
// which of them computed it. Included only by per-target translation units; internal
// linkage, so no target's code is shared with another's.
//
// Sigmoid and Swish use exp_reduced, not xsimd::exp, and a refined reciprocal, not a
// division: about 25 instructions per vector where xsimd's exp and the division cost
// several times that. Accuracy (tests/kernels/test_vector_activations.cc checks every
// 257th float bit pattern, and the specials, on each target the CPU runs):
//   sigmoid(x): within 5e-7 relative (4 ulps; 1.7e-7 measured, where the float formula
//     with std::exp has 1.4e-7) of 1 / (1 + e^-x), or 2e-38 absolute where the result is
//     below float's normal range (exactly 0 for x < -87.33); 1 at +inf, 0 at -inf, NaN
//     at NaN.
//   swish(x) = x * sigmoid(alpha x): the same relative bound, or 2e-36 absolute for
//     alpha x < -87.33 (then +-0); +inf at +inf, NaN at -inf (-inf * 0, as the graph
//     x * Sigmoid(x) it replaces) and at NaN.
#pragma once

#include <type_traits>
#include <xsimd/xsimd.hpp>

#include "ops/activation.h"

namespace minfer::kernels {
namespace {

template <class Arch>
using FloatVec = xsimd::batch<float, Arch>;

template <class Arch>
inline FloatVec<Arch> fused_multiply_add(FloatVec<Arch> a, FloatVec<Arch> b, FloatVec<Arch> c) {
  return xsimd::fma(a, b, c);
}
#if XSIMD_WITH_AVX512F
// xsimd 8.1 has no avx512f fma (its generic one is a multiply then an add).
template <>
inline FloatVec<xsimd::avx512f> fused_multiply_add(FloatVec<xsimd::avx512f> a, FloatVec<xsimd::avx512f> b,
                                                   FloatVec<xsimd::avx512f> c) {
  return _mm512_fmadd_ps(a, b, c);
}
#endif

// 1 / d to about 1 ulp for d >= 1: the hardware estimate refined by Newton steps, one
// after AVX-512's 14 bits, two after AVX2's 12 (one left 1 / 1 at 1 - 2^-24, so a
// sigmoid would not reach 1).
template <class Arch>
[[gnu::always_inline]] inline FloatVec<Arch> reciprocal(FloatVec<Arch> d) {
  using V = FloatVec<Arch>;
  const auto newton = [d](V r) { return fused_multiply_add(r, fused_multiply_add(-d, r, V(1.0f)), r); };
  if constexpr (std::is_same_v<Arch, xsimd::avx512f>)
    return newton(_mm512_rcp14_ps(d));
  else
    return newton(newton(_mm256_rcp_ps(d)));
}

// The exponential kinds below work on N vectors at once, each step on all N before the
// next. One vector's sigmoid is a chain of about 25 dependent operations (some 70 cycles
// of latency); a vector at a time, the out-of-order window holds too few of them to keep
// both FMA pipes busy (Zen 5: 4.0 ns per 16 floats for a swish over an L1-resident array;
// 2.8 ns four at a time, 2.7 eight at a time). Each vector's operations are the same at
// every N, so are its bits.

// e^x for x clamped to [-87.33, 88.37], where 2^n of n = round(x / ln 2) is a normal float
// built by an integer shift: x = n ln 2 + r with |r| <= ln 2 / 2 (ln 2 in two parts, so
// r is exact), e^r by Cephes' degree-5 polynomial (about 1 ulp). NaN stays NaN: the
// clamp's max and min return their second operand, x, when it is NaN. In place.
template <class Arch, int N>
[[gnu::always_inline]] inline void exp_reduced(FloatVec<Arch>* x) {
  using V = FloatVec<Arch>;
  using I = xsimd::batch<int32_t, Arch>;
  // Adding 1.5 * 2^23 rounds x / ln 2 to an integer n held in the low mantissa bits.
  const V shifter(12582912.0f);
  V t[N], n[N], r[N], p[N];
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) x[k] = xsimd::min(V(88.37626f), xsimd::max(V(-87.33654f), x[k]));
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) t[k] = fused_multiply_add(x[k], V(1.44269504088896341f), shifter);
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) n[k] = t[k] - shifter;
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) r[k] = fused_multiply_add(n[k], V(-0.693359375f), x[k]);
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) r[k] = fused_multiply_add(n[k], V(2.12194440e-4f), r[k]);
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) p[k] = fused_multiply_add(V(1.9875691500e-4f), r[k], V(1.3981999507e-3f));
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) p[k] = fused_multiply_add(p[k], r[k], V(8.3334519073e-3f));
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) p[k] = fused_multiply_add(p[k], r[k], V(4.1665795894e-2f));
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) p[k] = fused_multiply_add(p[k], r[k], V(1.6666665459e-1f));
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) p[k] = fused_multiply_add(p[k], r[k], V(5.0000001201e-1f));
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) p[k] = fused_multiply_add(p[k] * r[k], r[k], r[k] + V(1.0f));
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) {
    const I pow2n = (xsimd::bitwise_cast<I>(t[k]) << 23) + I(127 << 23);
    x[k] = p[k] * xsimd::bitwise_cast<V>(pow2n);
  }
}

// 1 / (1 + e^-x), 0 below -87.33 (where e^-x leaves exp_reduced's range). In place.
template <class Arch, int N>
[[gnu::always_inline]] inline void sigmoid_n(FloatVec<Arch>* x) {
  using V = FloatVec<Arch>;
  V e[N];
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) e[k] = -x[k];
  exp_reduced<Arch, N>(e);
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) x[k] = xsimd::select(x[k] < V(-87.33654f), V(0.0f), reciprocal<Arch>(V(1.0f) + e[k]));
}

// x * sigmoid(alpha x). In place.
template <class Arch, int N>
[[gnu::always_inline]] inline void swish_n(FloatVec<Arch>* x, FloatVec<Arch> alpha) {
  FloatVec<Arch> s[N];
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) s[k] = alpha * x[k];
  sigmoid_n<Arch, N>(s);
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) x[k] = x[k] * s[k];
}

template <class Arch>
inline FloatVec<Arch> sigmoid_of(FloatVec<Arch> x) {
  sigmoid_n<Arch, 1>(&x);
  return x;
}

template <class Arch>
inline FloatVec<Arch> swish_of(FloatVec<Arch> x, FloatVec<Arch> alpha) {
  swish_n<Arch, 1>(&x, alpha);
  return x;
}

// min(max(v, 0), 1) written with comparisons so that a NaN stays NaN.
template <class Arch>
inline FloatVec<Arch> clamp01(FloatVec<Arch> v) {
  using V = FloatVec<Arch>;
  return xsimd::select(v < V(0.0f), V(0.0f), xsimd::select(v > V(1.0f), V(1.0f), v));
}

template <class Arch>
inline FloatVec<Arch> hard_sigmoid_of(FloatVec<Arch> x, FloatVec<Arch> alpha, FloatVec<Arch> beta) {
  return clamp01<Arch>(fused_multiply_add(alpha, x, beta));
}

template <class Arch>
inline FloatVec<Arch> hard_swish_of(FloatVec<Arch> x) {
  using V = FloatVec<Arch>;
  return x * clamp01<Arch>(fused_multiply_add(V(1.0f / 6.0f), x, V(0.5f)));
}

// Relu and Clip keeping a NaN, as Activation::apply does (ONNX's max(x, 0) is NaN at NaN):
// the vector max and min return their second operand when either is NaN, so x goes second.
template <class Arch>
inline FloatVec<Arch> relu_of(FloatVec<Arch> x) {
  return xsimd::max(FloatVec<Arch>(0.0f), x);
}
template <class Arch>
inline FloatVec<Arch> clip_of(FloatVec<Arch> x, FloatVec<Arch> lo, FloatVec<Arch> hi) {
  return xsimd::min(hi, xsimd::max(lo, x));
}

// act on x for the activation_in_registers kinds (the identity for the others).
template <class Arch>
inline FloatVec<Arch> activate(FloatVec<Arch> x, const Activation& act) {
  using V = FloatVec<Arch>;
  switch (act.kind) {
    case ActivationKind::kRelu: return relu_of<Arch>(x);
    case ActivationKind::kClip: return clip_of<Arch>(x, V(act.alpha), V(act.beta));
    case ActivationKind::kLeakyRelu: return xsimd::select(x < V(0.0f), x * V(act.alpha), x);
    case ActivationKind::kSigmoid: return sigmoid_of<Arch>(x);
    case ActivationKind::kHardSigmoid: return hard_sigmoid_of<Arch>(x, V(act.alpha), V(act.beta));
    case ActivationKind::kHardSwish: return hard_swish_of<Arch>(x);
    case ActivationKind::kSwish: return swish_of<Arch>(x, V(act.alpha));
    default: return x;
  }
}

// Sigmoid (Kind kSigmoid) or Swish (kSwish, with alpha) of x[0..N) in place, four vectors
// at a time (more would not fit the registers beside a tile's), the last group the rest.
template <class Arch, ActivationKind Kind, int N>
[[gnu::always_inline]] inline void exponential_n(FloatVec<Arch>* x, FloatVec<Arch> alpha) {
  static_assert(Kind == ActivationKind::kSigmoid || Kind == ActivationKind::kSwish);
  constexpr int G = 4, R = N % G;
#pragma GCC unroll 16
  for (int g = 0; g < N / G; ++g) {
    if constexpr (Kind == ActivationKind::kSigmoid)
      sigmoid_n<Arch, G>(x + g * G);
    else
      swish_n<Arch, G>(x + g * G, alpha);
  }
  if constexpr (R > 0) {
    if constexpr (Kind == ActivationKind::kSigmoid)
      sigmoid_n<Arch, R>(x + N - R);
    else
      swish_n<Arch, R>(x + N - R, alpha);
  }
}

// act on the N vectors x[0..N) in place, the exponential kinds through exponential_n.
template <class Arch, int N>
[[gnu::always_inline]] inline void activate_n(FloatVec<Arch>* x, const Activation& act) {
  using V = FloatVec<Arch>;
  if (act.kind == ActivationKind::kSigmoid) {
    exponential_n<Arch, ActivationKind::kSigmoid, N>(x, V(1.0f));
  } else if (act.kind == ActivationKind::kSwish) {
    exponential_n<Arch, ActivationKind::kSwish, N>(x, V(act.alpha));
  } else {
#pragma GCC unroll 16
    for (int k = 0; k < N; ++k) x[k] = activate<Arch>(x[k], act);
  }
}

}  // namespace
}  // namespace minfer::kernels
