// InstanceNormalization (opset 6): each (n, c) plane of X [N, C, D1, ...] is normalised
// to zero mean and unit variance, then scaled and shifted per channel:
//   y = (x - mean) / sqrt(var + epsilon) * scale[c] + B[c].
// PyTorch exports nn.InstanceNorm1d/2d as this op, and nn.GroupNorm as a Reshape to
// [N, groups, rest], this op with unit scale and zero shift, a Reshape back and the
// affine Mul and Add. FLOPs as LayerNormalization counts a row (docs/cost-model.md): 7
// per element, 2 per plane.
#include <fmt/format.h>

#include "ops/kernels/normalization.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

struct Planes {
  int64_t batch = 0, channels = 0, size = 1;  // size: elements of a plane
};

void require_float32(std::span<const OpInput> in) {
  static const char* names[] = {"X", "scale", "B"};
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].dtype() != DType::kFloat32)
      throw OpError(fmt::format("{} is {}, expected float32", names[i], dtype_name(in[i].dtype())));
}

class InstanceNormOp final : public Op {
 public:
  explicit InstanceNormOp(const Node& node) {
    Attributes attrs = node.attrs;
    activation_ = take_fused_activation(attrs);
    attrs.check_known({"epsilon"});
    epsilon_ = static_cast<float>(attrs.get_float("epsilon", 1e-5));
  }

  OpTraits traits() const override {
    OpTraits t;
    t.inplace_input = 0;        // a plane is read whole (mean, variance) before it is written
    t.fuses_activation = true;  // style transfer's Relu after each norm
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    planes(in);  // checks the inputs
    return {in[0].type};
  }

  OpCost cost(const OpSignature& sig) const override {
    const Planes p = planes(sig.inputs);
    const int64_t elements = p.batch * p.channels * p.size;
    const CostExpr flops = CostExpr::of("FLOPs/element", 7) * CostExpr::of("elements", elements) +
                           CostExpr::of("FLOPs/plane", 2) * CostExpr::of("planes", p.batch * p.channels);
    return op_cost(*this, sig, 0, plus_activation_flops(flops, activation_, "elements", elements));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    const kernels::NormalizationKernels& k = kernels::normalization_or_scalar(ctx.isa);
    KernelFacts facts;
    facts.kernel = fmt::format("instance_norm_{}", isa_name(k.isa));
    if (activation_.kind != ActivationKind::kNone) facts.details["fused_activation"] = activation_name(activation_);
    return make_kernel(std::move(facts), [p = planes(sig.inputs), eps = epsilon_, act = activation_, &k](
                                             const RunContext& run, std::span<const TensorView> in,
                                             std::span<const TensorView> out, Workspace) {
      kernels::instance_norm(k, in[0].f32(), p.batch, p.channels, p.size, in[1].f32(), in[2].f32(), eps, out[0].f32(),
                             run.num_threads, act);
    });
  }

 private:
  Planes planes(std::span<const OpInput> in) const {
    check_input_count(in, 3, 3);
    require_float32(in);
    const Shape& x = in[0].shape();
    if (x.size() < 3) throw OpError(fmt::format("X must be [N, C, D1, ...] of rank 3 or more, got {}", shape_str(x)));
    static const char* names[] = {"X", "scale", "B"};
    for (size_t i = 1; i < 3; ++i)
      if (in[i].shape() != Shape{x[1]})
        throw OpError(fmt::format("{} has shape {}, expected {}: one value per channel of X {}", names[i],
                                  shape_str(in[i].shape()), shape_str(Shape{x[1]}), shape_str(x)));
    Planes p{x[0], x[1], 1};
    for (size_t d = 2; d < x.size(); ++d) p.size *= x[d];
    return p;
  }

  float epsilon_ = 1e-5f;
  Activation activation_;
};

}  // namespace

std::unique_ptr<Op> make_instance_normalization(const Node& node) {
  return std::make_unique<InstanceNormOp>(node);
}

}  // namespace minfer
