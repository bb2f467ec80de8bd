// The portable vector activations and the choice among the targets.
#include "ops/kernels/vector_activations.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace minfer::kernels {
namespace {

void sigmoid_scalar(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-y[i]));
}

void tanh_scalar(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(y[i]);
}

// Comparisons written so that a NaN falls through to the value itself.
float clamp01(float v) {
  return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}

void hard_sigmoid_scalar(float* y, int64_t n, float alpha, float beta) {
  for (int64_t i = 0; i < n; ++i) y[i] = clamp01(alpha * y[i] + beta);
}

void hard_swish_scalar(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] * clamp01(y[i] / 6.0f + 0.5f);
}

void swish_scalar(float* y, int64_t n, float alpha) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] / (1.0f + std::exp(-alpha * y[i]));
}

void erf_scalar(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::erf(y[i]);
}

void gelu_scalar(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * y[i] * (1.0f + std::erf(y[i] * 0.70710678118654752f));
}

void exp_scalar(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(y[i]);
}

void softmax_scalar(const float* x, float* y, int64_t n, bool log) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float e = std::exp(x[i] - max);
    sum += e;
    if (!log) y[i] = e;
  }
  const float log_sum = std::log(sum);
  for (int64_t i = 0; i < n; ++i) y[i] = log ? (x[i] - max) - log_sum : y[i] / sum;
}

}  // namespace

constinit const VectorActivations vector_activations_scalar = {"vector_activations_scalar",
                                                               Isa::kScalar,
                                                               &sigmoid_scalar,
                                                               &tanh_scalar,
                                                               &hard_sigmoid_scalar,
                                                               &hard_swish_scalar,
                                                               &swish_scalar,
                                                               &erf_scalar,
                                                               &gelu_scalar,
                                                               &exp_scalar,
                                                               &softmax_scalar};

const VectorActivations* vector_activations_for(Isa isa) {
  if (!isa_runnable(isa)) return nullptr;
  return per_isa<const VectorActivations*>(isa, &vector_activations_scalar, &vector_activations_avx2,
                                           &vector_activations_avx512);
}

const VectorActivations& active_vector_activations() {
  return *vector_activations_for(active_isa());
}

}  // namespace minfer::kernels
