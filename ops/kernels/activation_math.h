// The activations over xsimd batches, once for every SIMD target: the vector activations
// (vector_activations_impl.h) and the epilogues that apply them on the registers before
// the store (gemm_microkernel.h, simd.h) use these, so a value's bits do not depend on
// which of them computed it. Included only by per-target translation units; internal
// linkage, so no target's code is shared with another's.
//
// Sigmoid and Swish use exp_reduced, not xsimd::exp, and a refined reciprocal, not a
// division: about 12 instructions per vector where xsimd's exp and the division cost
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
inline FloatVec<Arch> reciprocal(FloatVec<Arch> d) {
  using V = FloatVec<Arch>;
  const auto newton = [d](V r) { return fused_multiply_add(r, fused_multiply_add(-d, r, V(1.0f)), r); };
  if constexpr (std::is_same_v<Arch, xsimd::avx512f>)
    return newton(_mm512_rcp14_ps(d));
  else
    return newton(newton(_mm256_rcp_ps(d)));
}

// e^x for x clamped to [-87.33, 88.37], where 2^n of n = round(x / ln 2) is a normal float
// built by an integer shift: x = n ln 2 + r with |r| <= ln 2 / 2 (ln 2 in two parts, so
// r is exact), e^r by Cephes' degree-5 polynomial (about 1 ulp). NaN stays NaN: the
// clamp's max and min return their second operand, x, when it is NaN.
template <class Arch>
inline FloatVec<Arch> exp_reduced(FloatVec<Arch> x) {
  using V = FloatVec<Arch>;
  using I = xsimd::batch<int32_t, Arch>;
  x = xsimd::min(V(88.37626f), xsimd::max(V(-87.33654f), x));
  // Adding 1.5 * 2^23 rounds x / ln 2 to an integer n held in the low mantissa bits.
  const V shifter(12582912.0f);
  const V t = fused_multiply_add(x, V(1.44269504088896341f), shifter);
  const V n = t - shifter;
  V r = fused_multiply_add(n, V(-0.693359375f), x);
  r = fused_multiply_add(n, V(2.12194440e-4f), r);
  V p(1.9875691500e-4f);
  p = fused_multiply_add(p, r, V(1.3981999507e-3f));
  p = fused_multiply_add(p, r, V(8.3334519073e-3f));
  p = fused_multiply_add(p, r, V(4.1665795894e-2f));
  p = fused_multiply_add(p, r, V(1.6666665459e-1f));
  p = fused_multiply_add(p, r, V(5.0000001201e-1f));
  p = fused_multiply_add(p * r, r, r + V(1.0f));
  const I pow2n = (xsimd::bitwise_cast<I>(t) << 23) + I(127 << 23);
  return p * xsimd::bitwise_cast<V>(pow2n);
}

// 1 / (1 + e^-x), 0 below -87.33 (where e^-x leaves exp_reduced's range).
template <class Arch>
inline FloatVec<Arch> sigmoid_of(FloatVec<Arch> x) {
  using V = FloatVec<Arch>;
  const V s = reciprocal<Arch>(V(1.0f) + exp_reduced<Arch>(-x));
  return xsimd::select(x < V(-87.33654f), V(0.0f), s);
}

template <class Arch>
inline FloatVec<Arch> swish_of(FloatVec<Arch> x, FloatVec<Arch> alpha) {
  return x * sigmoid_of<Arch>(alpha * x);
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

}  // namespace
}  // namespace minfer::kernels
