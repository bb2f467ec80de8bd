// Activation ops (Relu, Clip, LeakyRelu, Elu, Selu, Sigmoid, HardSigmoid, HardSwish,
// Tanh, Softplus): y = f(x) element by element, in place when the planner allows.
#include <fmt/format.h>

#include "ops/activation.h"
#include "ops/op.h"

namespace minfer {
namespace {

class ActivationOp final : public Op {
 public:
  explicit ActivationOp(const Node& node) : act_(activation_for(node)) {}

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    // Clip (opset 11+) takes optional scalar min and max inputs.
    check_input_count(in, 1, act_.kind == ActivationKind::kClip ? 3 : 1);
    for (size_t i = 1; i < in.size(); ++i)
      if (in[i].present && num_elements(in[i].shape) != 1)
        throw OpError(fmt::format("input {} must be a scalar, got {}", i, shape_str(in[i].shape)));
    return {in[0].shape};
  }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    Cost c = data_movement(in, out);
    c.flops = act_.flops_per_element() * num_elements(out[0]);
    return c;
  }

  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float>) const override {
    Activation act = act_;
    if (in.size() > 1 && in[1].data) act.alpha = in[1].data[0];
    if (in.size() > 2 && in[2].data) act.beta = in[2].data[0];
    const int64_t n = out[0].size();
    if (out[0].data != in[0].data) std::copy(in[0].data, in[0].data + n, out[0].data);
    act.apply(out[0].data, n);
  }

  int inplace_input() const override { return 0; }

 private:
  Activation act_;
};

}  // namespace

std::unique_ptr<Op> make_activation(const Node& node) { return std::make_unique<ActivationOp>(node); }

}  // namespace minfer
