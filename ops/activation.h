// Point-wise activation functions: run as their own ops and, after fusion, in the
// epilogue of the op that produces their input.
#pragma once

#include <cstdint>
#include <string>

#include "graph/graph.h"

namespace minfer {

enum class ActivationKind {
  kNone,
  kRelu,
  kClip,
  kLeakyRelu,
  kElu,
  kSelu,
  kSigmoid,
  kHardSigmoid,
  kHardSwish,
  kTanh,
  kSoftplus,
  kSwish,  // x * sigmoid(alpha x): the fused x * Sigmoid(x) (SiLU at alpha 1)
  kGelu,   // x / 2 * (1 + erf(x / sqrt 2)): ONNX's Gelu, or the fused decomposition torch exports
  kCelu,
  kThresholdedRelu,
  kShrink,  // x - bias above lambd, x + bias below -lambd, 0 between
  kMish     // x * tanh(softplus(x)) (opset 18)
};

struct Activation {
  ActivationKind kind = ActivationKind::kNone;
  float alpha = 0.0f;  // LeakyRelu/Elu/Selu/Swish/Celu/ThresholdedRelu alpha, HardSigmoid alpha, Clip min, Shrink lambd
  float beta = 0.0f;   // HardSigmoid beta, Clip max, Shrink bias
  float gamma = 0.0f;  // Selu gamma

  // y[i] = f(y[i]) for n elements; kNone does nothing. Those with exponentials or more
  // than one step run the vector activations of the active ISA (ops/kernels/vector_activations.h).
  void apply(float* y, int64_t n) const;
  float apply(float x) const;
  // FLOPs per element, as in docs/cost-model.md.
  int64_t flops_per_element() const;
};

// The activations the kernels' epilogues apply on the registers before the store
// (kernels/activation_math.h); the others run through Activation::apply on the stored
// row, while it is still in L1. Inline: the GEMM asks per tile, and a call there makes
// the tile's accumulators (all caller-saved registers) go through memory.
inline bool activation_in_registers(const Activation& act) {
  switch (act.kind) {
    case ActivationKind::kNone:
    case ActivationKind::kRelu:
    case ActivationKind::kClip:
    case ActivationKind::kLeakyRelu:
    case ActivationKind::kSigmoid:
    case ActivationKind::kHardSigmoid:
    case ActivationKind::kHardSwish:
    case ActivationKind::kSwish: return true;
    default: return false;
  }
}

// y[i] = act(y[i] + residual[i]) for n elements: a residual Add fused into the
// convolution that produced y (fuse_residual_add); the sum has the Add's value whichever
// operand y was (float addition commutes bit for bit).
void add_residual(const float* residual, int64_t n, const Activation& act, float* y);

// A fused activation lives in the attributes of the op that runs it: "activation" names
// the op type, "activation.<attribute>" its attributes (the fuse_activations pass sets
// them; net.json and ONNX files written after fusing keep them).
Attributes fused_activation_attributes(const Activation& a);
// The attributes of the activation's own node (activation_for reads them back).
Attributes activation_attributes(const Activation& a);
bool has_fused_activation(const Attributes& attrs);
// Removes a fused activation from `attrs` and returns it; kNone when there is none.
// Ops whose traits say fuses_activation call it before checking the rest.
Activation take_fused_activation(Attributes& attrs);

// The ONNX op type of an activation ("Relu", ...; "" for kNone), for reports.
std::string activation_name(const Activation& a);

// The activation a node of that op type computes (attributes parsed and checked), or
// kind == kNone when the op type is not an activation. Clip's bounds given as inputs
// are filled in by the caller.
Activation activation_for(const Node& node);

}  // namespace minfer
