#include "ops/activation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "graph/errors.h"
#include "ops/kernels/vector_activations.h"

namespace minfer {

namespace {

// Comparisons written so that a NaN falls through to the value itself: max(NaN, 0) is
// NaN in ONNX and numpy, where `x > 0 ? x : 0` would make it 0.
float relu(float x) {
  return x < 0.0f ? 0.0f : x;
}
float clamp01(float x) {
  return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}

}  // namespace

float Activation::apply(float x) const {
  switch (kind) {
    case ActivationKind::kNone: return x;
    case ActivationKind::kRelu: return relu(x);
    case ActivationKind::kClip: return std::min(std::max(x, alpha), beta);
    case ActivationKind::kLeakyRelu: return x < 0.0f ? alpha * x : x;
    case ActivationKind::kElu: return x < 0.0f ? alpha * (std::exp(x) - 1.0f) : x;
    case ActivationKind::kSelu: return x <= 0.0f ? gamma * (alpha * std::exp(x) - alpha) : gamma * x;
    case ActivationKind::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case ActivationKind::kHardSigmoid: return clamp01(alpha * x + beta);
    case ActivationKind::kHardSwish: return x * clamp01(x / 6.0f + 0.5f);
    case ActivationKind::kTanh: return std::tanh(x);
    // log(1 + e^x) overflows e^x for large x, where it equals x to float precision.
    case ActivationKind::kSoftplus: return x > 20.0f ? x : std::log1p(std::exp(x));
    case ActivationKind::kSwish: return x / (1.0f + std::exp(-alpha * x));
    case ActivationKind::kGelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case ActivationKind::kCelu: return x < 0.0f ? alpha * std::expm1(x / alpha) : x;
    case ActivationKind::kThresholdedRelu: return x > alpha ? x : 0.0f;
    case ActivationKind::kShrink: return x < -alpha ? x + beta : x > alpha ? x - beta : 0.0f;
    case ActivationKind::kMish: return x * std::tanh(x > 20.0f ? x : std::log1p(std::exp(x)));
  }
  return x;
}

void add_residual(const float* residual, int64_t n, const Activation& act, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += residual[i];
  act.apply(y, n);
}

void Activation::apply(float* y, int64_t n) const {
  // One switch per call, not per element: each case is a plain loop the compiler can vectorise.
  switch (kind) {
    case ActivationKind::kNone: return;
    case ActivationKind::kRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = relu(y[i]);
      return;
    case ActivationKind::kClip:  // std::max(NaN, a) and std::min(NaN, b) return the NaN
      for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(y[i], alpha), beta);
      return;
    case ActivationKind::kSigmoid: return kernels::active_vector_activations().sigmoid(y, n);
    case ActivationKind::kTanh: return kernels::active_vector_activations().tanh(y, n);
    case ActivationKind::kHardSigmoid: return kernels::active_vector_activations().hard_sigmoid(y, n, alpha, beta);
    case ActivationKind::kHardSwish: return kernels::active_vector_activations().hard_swish(y, n);
    case ActivationKind::kSwish: return kernels::active_vector_activations().swish(y, n, alpha);
    case ActivationKind::kGelu: return kernels::active_vector_activations().gelu(y, n);
    default:
      for (int64_t i = 0; i < n; ++i) y[i] = apply(y[i]);
  }
}

int64_t Activation::flops_per_element() const {
  switch (kind) {
    case ActivationKind::kNone: return 0;
    case ActivationKind::kRelu: return 1;             // max
    case ActivationKind::kClip: return 2;             // max, min
    case ActivationKind::kLeakyRelu: return 2;        // compare, multiply
    case ActivationKind::kElu: return 4;              // compare, exp, subtract, multiply
    case ActivationKind::kSelu: return 5;             // compare, exp, multiply, subtract, multiply
    case ActivationKind::kSigmoid: return 4;          // negate, exp, add, divide (the seed's count)
    case ActivationKind::kHardSigmoid: return 4;      // multiply, add, max, min
    case ActivationKind::kHardSwish: return 5;        // hard sigmoid's 4, then multiply
    case ActivationKind::kTanh: return 5;             // (e^2x - 1) / (e^2x + 1): multiply, exp, subtract, add, divide
    case ActivationKind::kSoftplus: return 3;         // exp, add, log
    case ActivationKind::kSwish: return 4;            // multiply, exp, add, divide
    case ActivationKind::kGelu: return 5;             // divide, erf, add, multiply, multiply (torch's decomposition)
    case ActivationKind::kCelu: return 5;             // compare, divide, exp, subtract, multiply
    case ActivationKind::kThresholdedRelu: return 1;  // compare
    case ActivationKind::kShrink: return 2;           // compare, add or subtract
    case ActivationKind::kMish: return 9;             // softplus's 3, tanh's 5, multiply
  }
  return 0;
}

std::string activation_name(const Activation& a) {
  switch (a.kind) {
    case ActivationKind::kNone: return "";
    case ActivationKind::kRelu: return "Relu";
    case ActivationKind::kClip: return "Clip";
    case ActivationKind::kLeakyRelu: return "LeakyRelu";
    case ActivationKind::kElu: return "Elu";
    case ActivationKind::kSelu: return "Selu";
    case ActivationKind::kSigmoid: return "Sigmoid";
    case ActivationKind::kHardSigmoid: return "HardSigmoid";
    case ActivationKind::kHardSwish: return "HardSwish";
    case ActivationKind::kTanh: return "Tanh";
    case ActivationKind::kSoftplus: return "Softplus";
    case ActivationKind::kSwish: return "Swish";
    case ActivationKind::kGelu: return "Gelu";
    case ActivationKind::kCelu: return "Celu";
    case ActivationKind::kThresholdedRelu: return "ThresholdedRelu";
    case ActivationKind::kShrink: return "Shrink";
    case ActivationKind::kMish: return "Mish";
  }
  return "";
}

Attributes activation_attributes(const Activation& a) {
  Attributes attrs;
  auto set = [&](const char* name, float v) { attrs.set(name, static_cast<double>(v)); };
  switch (a.kind) {
    case ActivationKind::kClip:  // an unbounded side is left out, as in the model
      if (std::isfinite(a.alpha)) set("min", a.alpha);
      if (std::isfinite(a.beta)) set("max", a.beta);
      break;
    case ActivationKind::kLeakyRelu:
    case ActivationKind::kElu:
    case ActivationKind::kCelu:
    case ActivationKind::kThresholdedRelu:
    case ActivationKind::kSwish: set("alpha", a.alpha); break;
    case ActivationKind::kShrink:
      set("lambd", a.alpha);
      set("bias", a.beta);
      break;
    case ActivationKind::kSelu:
      set("alpha", a.alpha);
      set("gamma", a.gamma);
      break;
    case ActivationKind::kHardSigmoid:
      set("alpha", a.alpha);
      set("beta", a.beta);
      break;
    default: break;
  }
  return attrs;
}

Attributes fused_activation_attributes(const Activation& a) {
  Attributes attrs;
  attrs.set("activation", activation_name(a));
  const Attributes own = activation_attributes(a);
  for (const auto& [name, value] : own.all()) attrs.set("activation." + name, value);
  return attrs;
}

bool has_fused_activation(const Attributes& attrs) {
  return attrs.has("activation");
}

Activation take_fused_activation(Attributes& attrs) {
  if (!attrs.has("activation")) return {};
  Node fused{"", attrs.get_string("activation", ""), {}, {}, {}};
  const std::string prefix = "activation.";
  std::vector<std::string> taken = {"activation"};
  for (const auto& [name, value] : attrs.all()) {
    if (name.rfind(prefix, 0) != 0) continue;
    fused.attrs.set(name.substr(prefix.size()), value);
    taken.push_back(name);
  }
  for (const std::string& name : taken) attrs.erase(name);
  const Activation a = activation_for(fused);
  if (a.kind == ActivationKind::kNone)
    throw OpError("attribute 'activation' names '" + excerpt(fused.op_type) + "', which is not an activation");
  return a;
}

Activation activation_for(const Node& node) {
  const std::string& t = node.op_type;
  const Attributes& at = node.attrs;
  Activation a;
  if (t == "Relu") {
    at.check_known({});
    a.kind = ActivationKind::kRelu;
  } else if (t == "Clip") {
    at.check_known({"min", "max"});  // opset 6 attributes; opset 11+ passes inputs instead
    a.kind = ActivationKind::kClip;
    a.alpha = static_cast<float>(at.get_float("min", -std::numeric_limits<float>::infinity()));
    a.beta = static_cast<float>(at.get_float("max", std::numeric_limits<float>::infinity()));
  } else if (t == "LeakyRelu") {
    at.check_known({"alpha"});
    a.kind = ActivationKind::kLeakyRelu;
    a.alpha = static_cast<float>(at.get_float("alpha", 0.01));
  } else if (t == "Elu") {
    at.check_known({"alpha"});
    a.kind = ActivationKind::kElu;
    a.alpha = static_cast<float>(at.get_float("alpha", 1.0));
  } else if (t == "Selu") {
    at.check_known({"alpha", "gamma"});
    a.kind = ActivationKind::kSelu;
    a.alpha = static_cast<float>(at.get_float("alpha", 1.67326319217681884765625));
    a.gamma = static_cast<float>(at.get_float("gamma", 1.05070102214813232421875));
  } else if (t == "Sigmoid") {
    at.check_known({});
    a.kind = ActivationKind::kSigmoid;
  } else if (t == "HardSigmoid") {
    at.check_known({"alpha", "beta"});
    a.kind = ActivationKind::kHardSigmoid;
    a.alpha = static_cast<float>(at.get_float("alpha", 0.2));
    a.beta = static_cast<float>(at.get_float("beta", 0.5));
  } else if (t == "HardSwish") {
    at.check_known({});
    a.kind = ActivationKind::kHardSwish;
  } else if (t == "Tanh") {
    at.check_known({});
    a.kind = ActivationKind::kTanh;
  } else if (t == "Swish") {  // ONNX opset 24's; here also what fuse_swish makes of x * Sigmoid(x)
    at.check_known({"alpha"});
    a.kind = ActivationKind::kSwish;
    a.alpha = static_cast<float>(at.get_float("alpha", 1.0));
  } else if (t == "Gelu") {  // opset 20; the tanh approximation is another function
    at.check_known({"approximate"});
    if (at.get_string("approximate", "none") != "none")
      throw UnsupportedError("Gelu with approximate='" + excerpt(at.get_string("approximate", "")) +
                             "' is not supported");
    a.kind = ActivationKind::kGelu;
  } else if (t == "Softplus") {
    at.check_known({});
    a.kind = ActivationKind::kSoftplus;
  } else if (t == "Mish") {
    at.check_known({});
    a.kind = ActivationKind::kMish;
  } else if (t == "Celu") {
    at.check_known({"alpha"});
    a.kind = ActivationKind::kCelu;
    a.alpha = static_cast<float>(at.get_float("alpha", 1.0));
    if (a.alpha == 0.0f) throw OpError("Celu's alpha must not be 0");
  } else if (t == "ThresholdedRelu") {
    at.check_known({"alpha"});
    a.kind = ActivationKind::kThresholdedRelu;
    a.alpha = static_cast<float>(at.get_float("alpha", 1.0));
  } else if (t == "Shrink") {
    at.check_known({"lambd", "bias"});
    a.kind = ActivationKind::kShrink;
    a.alpha = static_cast<float>(at.get_float("lambd", 0.5));
    a.beta = static_cast<float>(at.get_float("bias", 0.0));
  }
  return a;
}

}  // namespace minfer
