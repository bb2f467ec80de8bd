// The SIMD activations, written once over xsimd batches and instantiated per target
// by vector_activations_<isa>.cc; internal linkage, so no target's code is shared with
// another's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <xsimd/xsimd.hpp>

#include "ops/kernels/activation_math.h"
#include "ops/kernels/simd.h"

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
  using V = xsimd::batch<float, Arch>;
  activate_span(activate_with<V, ActivationKind::kSigmoid>([](V x) { return sigmoid_of<Arch>(x); }), y, n);
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
  activate_span(activate_with<V, ActivationKind::kSwish>([=](V x) { return swish_of<Arch>(x, V(alpha)); }, V(alpha)), y,
                n);
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

// xsimd's exp saturates early (inf above about 88.37, 0 below about -87.3, where the
// float results are still finite or subnormal): the rare vectors that reach those ends
// take std::exp lane by lane.
template <class Arch>
void exp(float* y, int64_t n) {
  using V = xsimd::batch<float, Arch>;
  map_vectors<Arch>(y, n, [](V x) {
    if (!xsimd::any((x > V(88.0f)) | (x < V(-87.0f)))) return xsimd::exp(x);
    alignas(64) float lanes[V::size];
    x.store_aligned(lanes);
    for (float& l : lanes) l = std::exp(l);
    return V::load_aligned(lanes);
  });
}

// e^d for d <= 0 (or NaN), N vectors at once: exp_reduced, and 0 where e^d is below
// float's normal range (d < -87.34, where exp_reduced's clamp would give 1.2e-38), so
// that e^-inf is 0. In place.
template <class Arch, int N>
[[gnu::always_inline]] inline void exp_not_above_zero(xsimd::batch<float, Arch>* d) {
  using V = xsimd::batch<float, Arch>;
  xsimd::batch_bool<float, Arch> tiny[N];
  for (int k = 0; k < N; ++k) tiny[k] = d[k] < V(-87.33654f);
  exp_reduced<Arch, N>(d);
  for (int k = 0; k < N; ++k) d[k] = xsimd::select(tiny[k], V(0.0f), d[k]);
}

// Three passes over the row (max; exponentials and their sum; the scaling), each on
// full vectors, the tail through a copy padded with -inf (e^-inf adds 0 to the sum).
// The exponentials four vectors at a time through exp_reduced (about 1 ulp), then a
// multiply by the sum's reciprocal (within 1.5 ulps of the division): ViT-B/16's
// attention rows took 0.86x the time of xsimd's exp and a division per element (still
// 1.3x ONNX Runtime's: on 197-long rows the horizontal max and sum cost as much).
template <class Arch>
void softmax(const float* x, float* y, int64_t n, bool log) {
  using V = xsimd::batch<float, Arch>;
  constexpr int64_t W = V::size;
  constexpr int G = 4;
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  const int64_t full = n / W * W;
  alignas(64) float tail[W];
  std::fill(tail, tail + W, kMinusInf);
  std::copy(x + full, x + n, tail);
  V vmax = V::load_aligned(tail);
  for (int64_t i = 0; i < full; i += W) vmax = xsimd::max(vmax, V::load_unaligned(x + i));
  // Horizontal max and sum through memory: xsimd 8 has no reduce_max, and its hadd needs
  // AVX-512DQ, which the avx512 target (-mavx512f) does not assume.
  alignas(64) float lanes[W];
  vmax.store_aligned(lanes);
  const V max(*std::max_element(lanes, lanes + W));
  V sum(0.0f);
  // The vectors in order (so is their sum), G at a time while G are left.
  const auto exps = [&]<int N>(int64_t i) {
    V e[N];
    for (int k = 0; k < N; ++k) e[k] = V::load_unaligned(x + i + k * W) - max;
    exp_not_above_zero<Arch, N>(e);
    for (int k = 0; k < N; ++k) {
      if (!log) e[k].store_unaligned(y + i + k * W);
      sum += e[k];
    }
  };
  int64_t i = 0;
  for (; i + G * W <= full; i += G * W) exps.template operator()<G>(i);
  for (; i < full; i += W) exps.template operator()<1>(i);
  V tail_e[1] = {V::load_aligned(tail) - max};
  exp_not_above_zero<Arch, 1>(tail_e);
  sum += tail_e[0];
  sum.store_aligned(lanes);
  float lane_sum = 0.0f;
  for (float l : lanes) lane_sum += l;
  // A NaN in x need not survive max(), but e^(NaN - max) puts it in the sum, so every
  // output is NaN, as in the scalar formula.
  if (log) {
    const V log_sum = xsimd::log(V(lane_sum));
    for (int64_t j = 0; j < full; j += W) ((V::load_unaligned(x + j) - max) - log_sum).store_unaligned(y + j);
    ((V::load_aligned(tail) - max) - log_sum).store_aligned(tail);
  } else {
    const V scale(1.0f / lane_sum);
    for (int64_t j = 0; j < full; j += W) (V::load_unaligned(y + j) * scale).store_unaligned(y + j);
    (tail_e[0] * scale).store_aligned(tail);
  }
  std::copy(tail, tail + (n - full), y + full);
}

}  // namespace
}  // namespace minfer::kernels
