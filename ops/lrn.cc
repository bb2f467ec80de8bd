// LRN, local response normalisation (opset 1 and 13, AlexNet's): each element of X
// [N, C, D1, ...] divided by a power of the sum of squares of its channel window,
//   y = x / (bias + alpha / size * sum of x[n, i, ...]^2 for i in the window)^beta,
// the window of channel c being [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]
// clipped to the channels. FLOPs per element (docs/cost-model.md): a square, the
// window's `size` adds (as a pool counts its window), multiply by alpha / size, add bias,
// the power, the divide: size + 5, what torch's decomposition of nn.LocalResponseNorm
// (Mul, AveragePool, Mul, Add, Pow, Div) counts.
//
// PyTorch's window is [c - floor(size / 2), c + floor((size - 1) / 2)]: the same for an
// odd size, one channel earlier for an even one.
#include <fmt/format.h>

#include <algorithm>

#include "ops/kernels/normalization.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

class LrnOp final : public Op {
 public:
  explicit LrnOp(const Node& node) {
    node.attrs.check_known({"alpha", "beta", "bias", "size"});
    if (!node.attrs.has("size")) throw OpError("attribute 'size' is required");
    size_ = node.attrs.get_int("size", 0);
    if (size_ < 1) throw OpError(fmt::format("size must be at least 1, got {}", size_));
    alpha_ = node.attrs.get_float("alpha", 1e-4);
    beta_ = node.attrs.get_float("beta", 0.75);
    bias_ = node.attrs.get_float("bias", 1.0);
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check(in);
    return {in[0].type};
  }

  OpCost cost(const OpSignature& sig) const override {
    check(sig.inputs);
    const CostExpr flops =
        CostExpr::of("FLOPs/element", size_ + 5) * CostExpr::of("elements", num_elements(sig.inputs[0].shape()));
    return op_cost(*this, sig, 0, flops);
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    check(sig.inputs);
    const Shape& x = sig.inputs[0].shape();
    const kernels::NormalizationKernels& k = kernels::normalization_or_scalar(ctx.isa);
    KernelFacts facts;
    facts.kernel = fmt::format("lrn_{}", isa_name(k.isa));
    const int64_t batch = x[0], channels = x[1], plane = num_elements(x) / std::max<int64_t>(1, batch * channels);
    return make_kernel(std::move(facts), [batch, channels, plane, p = kernels::lrn_params(size_, alpha_, beta_, bias_),
                                          &k](const RunContext& run, std::span<const TensorView> in,
                                              std::span<const TensorView> out, Workspace) {
      kernels::lrn(k, in[0].f32(), batch, channels, plane, p, out[0].f32(), run.num_threads);
    });
  }

 private:
  void check(std::span<const OpInput> in) const {
    check_input_count(in, 1, 1);
    if (in[0].dtype() != DType::kFloat32)
      throw OpError(fmt::format("X is {}, expected float32", dtype_name(in[0].dtype())));
    if (in[0].shape().size() < 3)
      throw OpError(fmt::format("X must be [N, C, D1, ...] of rank 3 or more, got {}", shape_str(in[0].shape())));
  }

  int64_t size_ = 1;
  double alpha_ = 1e-4, beta_ = 0.75, bias_ = 1.0;
};

}  // namespace

std::unique_ptr<Op> make_lrn(const Node& node) {
  return std::make_unique<LrnOp>(node);
}

}  // namespace minfer
