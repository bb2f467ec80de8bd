// GroupNormalization (opset 21): the C channels of X [N, C, D1, ...] in num_groups
// groups of C / num_groups; each (n, group) normalised over its channels and positions
// to zero mean and unit variance, then scaled and shifted per channel:
//   y = (x - mean) / sqrt(var + epsilon) * scale[c] + bias[c].
// Opset 18's per-group scale and bias are made per-channel when the model loads
// (engine/onnx_opset_upgrade.cc). stash_type 1 (the default) computes in float32 and
// more; other types are refused. FLOPs as InstanceNormalization's (docs/cost-model.md):
// 7 per element, 2 per group.
#include <fmt/format.h>

#include "ops/kernels/normalization.h"
#include "ops/kernels/threads.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

struct Groups {
  int64_t batch = 0, groups = 0, channels_per_group = 0, plane = 1;  // plane: elements of a channel
};

class GroupNormOp final : public Op {
 public:
  explicit GroupNormOp(const Node& node) {
    Attributes attrs = node.attrs;
    activation_ = take_fused_activation(attrs);
    attrs.check_known({"epsilon", "num_groups", "stash_type"});
    if (!attrs.has("num_groups")) throw OpError("attribute 'num_groups' is required");
    groups_ = attrs.get_int("num_groups", 1);
    if (groups_ < 1) throw OpError(fmt::format("num_groups must be at least 1, got {}", groups_));
    epsilon_ = static_cast<float>(attrs.get_float("epsilon", 1e-5));
    if (attrs.get_int("stash_type", 1) != 1)
      throw UnsupportedError(
          fmt::format("stash_type {} is not supported (only 1: float32)", attrs.get_int("stash_type", 1)));
  }

  OpTraits traits() const override {
    OpTraits t;
    t.inplace_input = 0;  // a group is read whole (mean, variance) before it is written
    t.fuses_activation = true;
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    groups(in);  // checks the inputs
    return {in[0].type};
  }

  OpCost cost(const OpSignature& sig) const override {
    const Groups g = groups(sig.inputs);
    const int64_t elements = num_elements(sig.inputs[0].shape());
    const CostExpr flops = CostExpr::of("FLOPs/element", 7) * CostExpr::of("elements", elements) +
                           CostExpr::of("FLOPs/group", 2) * CostExpr::of("groups", g.batch * g.groups);
    return op_cost(*this, sig, 0, plus_activation_flops(flops, activation_, "elements", elements));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    const kernels::NormalizationKernels& k = kernels::normalization_or_scalar(ctx.isa);
    KernelFacts facts;
    facts.kernel = fmt::format("group_norm_{}", isa_name(k.isa));
    if (activation_.kind != ActivationKind::kNone) facts.details["fused_activation"] = activation_name(activation_);
    return make_kernel(std::move(facts), [g = groups(sig.inputs), eps = epsilon_, act = activation_, &k](
                                             const RunContext& run, std::span<const TensorView> in,
                                             std::span<const TensorView> out, Workspace) {
      const int64_t units = g.batch * g.groups, n = g.channels_per_group * g.plane;
      const int team =
          kernels::threads_worth_starting(4 * units * n, units, run.num_threads, kernels::Work::kStreaming);
      const float *x = in[0].f32(), *scale = in[1].f32(), *bias = in[2].f32();
      float* y = out[0].f32();
      kernels::for_each_on_team(team, units, [&](int64_t u) {
        // Normalised as one plane, then each channel's part scaled while it is in cache.
        float* group = y + u * n;
        k.instance_norm_plane(x + u * n, n, 1.0f, 0.0f, eps, group);
        for (int64_t j = 0; j < g.channels_per_group; ++j) {
          const int64_t c = u % g.groups * g.channels_per_group + j;
          float* row = group + j * g.plane;
          for (int64_t i = 0; i < g.plane; ++i) row[i] = row[i] * scale[c] + bias[c];
        }
        act.apply(group, n);
      });
    });
  }

 private:
  Groups groups(std::span<const OpInput> in) const {
    check_input_count(in, 3, 3);
    static const char* names[] = {"X", "scale", "bias"};
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i].dtype() != DType::kFloat32)
        throw OpError(fmt::format("{} is {}, expected float32", names[i], dtype_name(in[i].dtype())));
    const Shape& x = in[0].shape();
    if (x.size() < 2) throw OpError(fmt::format("X must be [N, C, ...] of rank 2 or more, got {}", shape_str(x)));
    if (x[1] % groups_ != 0)
      throw OpError(fmt::format("num_groups {} does not divide the {} channels of X {}", groups_, x[1], shape_str(x)));
    for (size_t i = 1; i < 3; ++i)
      if (in[i].shape() != Shape{x[1]})
        throw OpError(fmt::format("{} has shape {}, expected {}: one value per channel of X {}", names[i],
                                  shape_str(in[i].shape()), shape_str(Shape{x[1]}), shape_str(x)));
    Groups g{x[0], groups_, x[1] / groups_, 1};
    for (size_t d = 2; d < x.size(); ++d) g.plane *= x[d];
    return g;
  }

  int64_t groups_ = 1;
  float epsilon_ = 1e-5f;
  Activation activation_;
};

}  // namespace

std::unique_ptr<Op> make_group_normalization(const Node& node) {
  return std::make_unique<GroupNormOp>(node);
}

}  // namespace minfer
