// Softmax and LogSoftmax along one axis (opset 13 semantics; default axis -1).
// FLOPs per element: max, subtract, exp, add, divide (or log-subtract) = 5.
#include <fmt/format.h>

#include <cmath>

#include "ops/op_helpers.h"

namespace minfer {
namespace {

class SoftmaxOp final : public Op {
 public:
  SoftmaxOp(const Node& node, bool log) : log_(log) {
    node.attrs.check_known({"axis"});
    axis_ = node.attrs.get_int("axis", -1);
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    require_float(in);
    normalize_axis(axis_, static_cast<int64_t>(in[0].shape().size()));
    return {in[0].type};
  }

  OpCost cost(const OpSignature& sig) const override {
    return op_cost(*this, sig, 0,
                   CostExpr::of("FLOPs/element", 5) * CostExpr::of("elements", num_elements(sig.outputs[0].shape())));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& s = sig.inputs[0].shape();
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(s.size())));
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= s[i];
    for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
    return make_kernel({}, [outer, inner, n = s[axis], log = log_](const RunContext&, std::span<const TensorView> in,
                                                                   std::span<const TensorView> out, Workspace) {
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const float* x = in[0].f32() + o * n * inner + i;
          float* y = out[0].f32() + o * n * inner + i;
          float max = x[0];
          for (int64_t j = 1; j < n; ++j) max = std::max(max, x[j * inner]);
          float sum = 0.0f;
          for (int64_t j = 0; j < n; ++j) {
            const float e = std::exp(x[j * inner] - max);
            sum += e;
            if (!log) y[j * inner] = e;
          }
          if (log) {
            const float log_sum = std::log(sum);
            for (int64_t j = 0; j < n; ++j) y[j * inner] = x[j * inner] - max - log_sum;
          } else {
            for (int64_t j = 0; j < n; ++j) y[j * inner] /= sum;
          }
        }
      }
    });
  }

 private:
  bool log_;
  int64_t axis_;
};

}  // namespace

std::unique_ptr<Op> make_softmax(const Node& node) {
  return std::make_unique<SoftmaxOp>(node, false);
}
std::unique_ptr<Op> make_log_softmax(const Node& node) {
  return std::make_unique<SoftmaxOp>(node, true);
}

}  // namespace minfer
