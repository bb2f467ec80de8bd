// Activation ops (Relu, Clip, LeakyRelu, Elu, Selu, Sigmoid, HardSigmoid, HardSwish,
// Tanh, Softplus, Swish, Gelu, Celu, ThresholdedRelu, Shrink, Mish): y = f(x) element by
// element (ops/activation.h), in place when the planner allows; fuse_activations moves
// them into the epilogue of the op before. Clip also runs on int64.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "ops/op_helpers.h"

namespace minfer {
namespace {

class ActivationOp final : public Op {
 public:
  explicit ActivationOp(const Node& node) : act_(activation_for(node)) {}

  OpTraits traits() const override {
    OpTraits t;
    t.inplace_input = 0;
    t.elementwise = true;
    t.activation = true;
    t.non_data_inputs = 0b110;  // Clip's bounds
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    // Clip (opset 11+) takes optional scalar min and max inputs.
    check_input_count(in, 1, act_.kind == ActivationKind::kClip ? 3 : 1);
    if (clips_ints(in)) {
      for (size_t i = 1; i < in.size(); ++i)
        if (in[i].present && in[i].dtype() != DType::kInt64)
          throw OpError(fmt::format("input {} is {}; it must be int64 like the input", i, dtype_name(in[i].dtype())));
    } else {
      require_float(in);
    }
    for (size_t i = 1; i < in.size(); ++i)
      if (in[i].present && num_elements(in[i].shape()) != 1)
        throw OpError(fmt::format("input {} must be a scalar, got {}", i, shape_str(in[i].shape())));
    return {in[0].type};
  }

  OpCost cost(const OpSignature& sig) const override {
    const CostExpr flops = CostExpr::of("FLOPs/element", act_.flops_per_element()) *
                           CostExpr::of("elements", num_elements(sig.outputs[0].shape()));
    return op_cost(*this, sig, 0, flops);
  }

  std::optional<Activation> as_activation(const OpSignature& sig) const override {
    if (sig.inputs[0].dtype() != DType::kFloat32) return std::nullopt;
    Activation act = act_;
    for (size_t i = 1; i < sig.inputs.size(); ++i) {
      if (!sig.inputs[i].present) continue;
      if (!sig.inputs[i].constant) return std::nullopt;
      (i == 1 ? act.alpha : act.beta) = sig.inputs[i].constant->values<float>()[0];
    }
    return act;
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    if (sig.inputs[0].dtype() == DType::kInt64) return bind_int_clip();
    return make_kernel({}, [act_ = act_](const RunContext&, std::span<const TensorView> in,
                                         std::span<const TensorView> out, Workspace) {
      Activation act = act_;
      if (in.size() > 1 && in[1].data) act.alpha = in[1].f32()[0];
      if (in.size() > 2 && in[2].data) act.beta = in[2].f32()[0];
      const int64_t n = out[0].size();
      if (out[0].data != in[0].data && n > 0) std::memcpy(out[0].data, in[0].data, sizeof(float) * n);
      act.apply(out[0].f32(), n);
    });
  }

 private:
  // Clip also bounds int64 tensors (torch.clamp on indices and sizes exports it).
  bool clips_ints(std::span<const OpInput> in) const {
    return act_.kind == ActivationKind::kClip && in[0].dtype() == DType::kInt64;
  }

  static std::unique_ptr<Kernel> bind_int_clip() {
    return make_kernel(
        {}, [](const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          const int64_t lo = in.size() > 1 && in[1].data ? in[1].as<int64_t>()[0] : INT64_MIN;
          const int64_t hi = in.size() > 2 && in[2].data ? in[2].as<int64_t>()[0] : INT64_MAX;
          const int64_t* x = in[0].as<int64_t>();
          int64_t* y = out[0].as<int64_t>();
          // As std::clamp but defined when lo > hi: ONNX then gives max, as numpy.clip does.
          for (int64_t i = 0, n = out[0].size(); i < n; ++i) y[i] = std::min(std::max(x[i], lo), hi);
        });
  }

  Activation act_;
};

}  // namespace

std::unique_ptr<Op> make_activation(const Node& node) {
  return std::make_unique<ActivationOp>(node);
}

}  // namespace minfer
