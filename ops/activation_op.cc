// Activation ops (Relu, Clip, LeakyRelu, Elu, Selu, Sigmoid, HardSigmoid, HardSwish,
// Tanh, Softplus, Swish, Gelu): y = f(x) element by element (ops/activation.h), in place when the
// planner allows; fuse_activations moves them into the epilogue of the op before.
#include <fmt/format.h>

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
    require_float(in);
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
    Activation act = act_;
    for (size_t i = 1; i < sig.inputs.size(); ++i) {
      if (!sig.inputs[i].present) continue;
      if (!sig.inputs[i].constant) return std::nullopt;
      (i == 1 ? act.alpha : act.beta) = sig.inputs[i].constant->values<float>()[0];
    }
    return act;
  }

  std::unique_ptr<Kernel> bind(const OpSignature&, const BindContext&) const override {
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
  Activation act_;
};

}  // namespace

std::unique_ptr<Op> make_activation(const Node& node) {
  return std::make_unique<ActivationOp>(node);
}

}  // namespace minfer
