// Activations over arrays with xsimd (the activation ops, the fused epilogues, the
// LSTM cell's gates, Erf, Exp and Softmax's rows), one implementation per ISA, chosen through the kernels' one dispatch
// point (isa.h).
#pragma once

#include <cstdint>

#include "profiler/isa.h"

namespace minfer::kernels {

struct VectorActivations {
  const char* name;  // vector_activations_<isa>
  Isa isa;
  void (*sigmoid)(float* y, int64_t n);                                // y = 1 / (1 + e^-y)
  void (*tanh)(float* y, int64_t n);                                   // y = tanh(y)
  void (*hard_sigmoid)(float* y, int64_t n, float alpha, float beta);  // y = min(max(alpha y + beta, 0), 1)
  void (*hard_swish)(float* y, int64_t n);                             // y = y * min(max(y / 6 + 1/2, 0), 1)
  void (*swish)(float* y, int64_t n, float alpha);                     // y = y / (1 + e^(-alpha y))
  void (*erf)(float* y, int64_t n);                                    // y = erf(y)
  void (*gelu)(float* y, int64_t n);                                   // y = y / 2 * (1 + erf(y / sqrt 2))
  void (*exp)(float* y, int64_t n);                                    // y = e^y
  // y = e^(x - max x) / sum e^(x - max x) over one row of n (log: y = x - max x - log sum);
  // a NaN anywhere, or +inf, makes the row NaN, as the formula does. y may be x.
  void (*softmax)(const float* x, float* y, int64_t n, bool log);
};

// The set of target isa, or nullptr when this CPU cannot run it.
const VectorActivations* vector_activations_for(Isa isa);
// The set of active_isa().
const VectorActivations& active_vector_activations();

// One per target, each in its own translation unit compiled with its ISA flags.
extern const VectorActivations vector_activations_scalar;
extern const VectorActivations vector_activations_avx2;
extern const VectorActivations vector_activations_avx512;

}  // namespace minfer::kernels
