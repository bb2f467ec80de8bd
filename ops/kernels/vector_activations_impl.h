// The SIMD activations, written once over xsimd batches and instantiated per target
// by vector_activations_<isa>.cc; internal linkage, so no target's code is shared with
// another's.
#pragma once

#include <cmath>
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "ops/kernels/activation_math.h"

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

template <class Arch>
void sigmoid(float* y, int64_t n) {
  map_vectors<Arch>(y, n, [](xsimd::batch<float, Arch> x) { return sigmoid_of<Arch>(x); });
}

template <class Arch>
void tanh(float* y, int64_t n) {
  map_vectors<Arch>(y, n, [](xsimd::batch<float, Arch> x) { return xsimd::tanh(x); });
}

template <class Arch>
void hard_sigmoid(float* y, int64_t n, float alpha, float beta) {
  using V = xsimd::batch<float, Arch>;
  map_vectors<Arch>(y, n, [=](V x) { return hard_sigmoid_of<Arch>(x, V(alpha), V(beta)); });
}

template <class Arch>
void hard_swish(float* y, int64_t n) {
  map_vectors<Arch>(y, n, [](xsimd::batch<float, Arch> x) { return hard_swish_of<Arch>(x); });
}

template <class Arch>
void swish(float* y, int64_t n, float alpha) {
  using V = xsimd::batch<float, Arch>;
  map_vectors<Arch>(y, n, [=](V x) { return swish_of<Arch>(x, V(alpha)); });
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
