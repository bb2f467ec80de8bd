// The SIMD activations, written once over xsimd batches and instantiated per target
// by vector_activations_<isa>.cc; internal linkage, so no target's code is shared with
// another's.
#pragma once

#include <cmath>
#include <cstdint>
#include <xsimd/xsimd.hpp>

namespace minfer::kernels {
namespace {

// Full vectors through `f`, the tail (fewer than one vector) through a zero-padded copy,
// so every element goes through the same SIMD formula.
template <class Arch, class F>
void map_vectors(float* y, int64_t n, F f) {
  using V = xsimd::batch<float, Arch>;
  constexpr int64_t W = V::size;
  int64_t i = 0;
  for (; i + W <= n; i += W) f(V::load_unaligned(y + i)).store_unaligned(y + i);
  if (i == n) return;
  alignas(64) float tail[W] = {};
  for (int64_t t = 0; t < n - i; ++t) tail[t] = y[i + t];
  f(V::load_aligned(tail)).store_aligned(tail);
  for (int64_t t = 0; t < n - i; ++t) y[i + t] = tail[t];
}

// 1 / (1 + e^-x): e^-x overflows to inf for x < -88, giving exactly 0.
template <class Arch>
void sigmoid(float* y, int64_t n) {
  using V = xsimd::batch<float, Arch>;
  map_vectors<Arch>(y, n, [](V x) { return V(1.0f) / (V(1.0f) + xsimd::exp(-x)); });
}

template <class Arch>
void tanh(float* y, int64_t n) {
  map_vectors<Arch>(y, n, [](xsimd::batch<float, Arch> x) { return xsimd::tanh(x); });
}

// min(max(v, 0), 1) written with comparisons so that a NaN stays NaN (the vector max and
// min instructions would return the bound).
template <class Arch>
xsimd::batch<float, Arch> clamp01(xsimd::batch<float, Arch> v) {
  using V = xsimd::batch<float, Arch>;
  return xsimd::select(v < V(0.0f), V(0.0f), xsimd::select(v > V(1.0f), V(1.0f), v));
}

template <class Arch>
void hard_sigmoid(float* y, int64_t n, float alpha, float beta) {
  using V = xsimd::batch<float, Arch>;
  map_vectors<Arch>(y, n, [=](V x) { return clamp01<Arch>(xsimd::fma(V(alpha), x, V(beta))); });
}

template <class Arch>
void hard_swish(float* y, int64_t n) {
  using V = xsimd::batch<float, Arch>;
  map_vectors<Arch>(y, n, [](V x) { return x * clamp01<Arch>(xsimd::fma(V(1.0f / 6.0f), x, V(0.5f))); });
}

// x / (1 + e^(-alpha x)): 0 (signed) once e^(-alpha x) overflows, NaN at -inf as x * sigmoid(x).
template <class Arch>
void swish(float* y, int64_t n, float alpha) {
  using V = xsimd::batch<float, Arch>;
  map_vectors<Arch>(y, n, [=](V x) { return x / (V(1.0f) + xsimd::exp(V(-alpha) * x)); });
}

template <class Arch>
void erf(float* y, int64_t n) {
  map_vectors<Arch>(y, n, [](xsimd::batch<float, Arch> x) { return xsimd::erf(x); });
}

// Exact GELU, x / 2 * (1 + erf(x / sqrt 2)): PyTorch's nn.GELU() and ONNX's Gelu.
template <class Arch>
void gelu(float* y, int64_t n) {
  using V = xsimd::batch<float, Arch>;
  map_vectors<Arch>(y, n, [](V x) { return V(0.5f) * x * (V(1.0f) + xsimd::erf(x * V(0.70710678118654752f))); });
}

}  // namespace
}  // namespace minfer::kernels
