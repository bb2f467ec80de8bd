// BatchNormalization at inference: y = (x - mean) / sqrt(var + eps) * scale + B, run as
// a per-channel scale and shift (2 FLOPs per element: kernels/normalization.h), planes
// split among threads. The fold_bn pass folds it into the weights of the op before it
// where that op can take it (Op::fold_channel_affine); where it cannot (DenseNet's norm1
// after each Concat), the activation after it is fused here (fuse_activations).
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "ops/kernels/normalization.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

class BatchNormOp final : public Op {
 public:
  explicit BatchNormOp(const Node& node) {
    Attributes attrs = node.attrs;
    activation_ = take_fused_activation(attrs);
    attrs.check_known({"epsilon", "momentum", "training_mode", "spatial"});
    epsilon_ = attrs.get_float("epsilon", 1e-5);
    if (attrs.get_int("training_mode", 0) != 0)
      throw UnsupportedError("training_mode=1 is not supported (inference only)");
    if (attrs.get_int("spatial", 1) != 1) throw UnsupportedError("spatial=0 is not supported");
    if (node.outputs.size() > 1) throw UnsupportedError("running mean/var outputs (training mode) are not supported");
  }

  OpTraits traits() const override {
    OpTraits t;
    t.inplace_input = 0;
    t.elementwise = true;
    // Folded into the op before it, a fused activation would be lost.
    t.channel_affine = activation_.kind == ActivationKind::kNone;
    t.fuses_activation = true;
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 5, 5);
    require_float(in);
    const Shape& x = in[0].shape();
    if (x.size() < 2) throw OpError(fmt::format("input must be at least 2-D [N,C,...], got {}", shape_str(x)));
    static const char* names[] = {"X", "scale", "B", "mean", "var"};
    for (size_t i = 1; i < 5; ++i)
      if (in[i].shape() != Shape{x[1]})
        throw OpError(fmt::format("{} has shape {}, expected [{}] (the input's channels)", names[i],
                                  shape_str(in[i].shape()), x[1]));
    return {in[0].type};
  }

  OpCost cost(const OpSignature& sig) const override {
    const int64_t elements = num_elements(sig.outputs[0].shape());
    return op_cost(*this, sig, 0,
                   plus_activation_flops(CostExpr::of("FLOPs/element", 2) * CostExpr::of("elements", elements),
                                         activation_, "elements", elements));
  }

  // scale' = gamma / sqrt(var + eps) and shift' = beta - mean * scale', in double.
  std::optional<ChannelAffine> channel_affine(const OpSignature& sig) const override {
    if (activation_.kind != ActivationKind::kNone) return std::nullopt;
    for (size_t i = 1; i < 5; ++i)
      if (!sig.inputs[i].constant) return std::nullopt;
    auto v = [&](size_t i) { return sig.inputs[i].constant->values<float>(); };
    ChannelAffine a;
    for (size_t c = 0; c < v(1).size(); ++c) {
      const double s = v(1)[c] / std::sqrt(double(v(4)[c]) + epsilon_);
      a.scale.push_back(s);
      a.shift.push_back(v(2)[c] - v(3)[c] * s);
    }
    return a;
  }

  std::unique_ptr<Kernel> bind(const OpSignature&, const BindContext& ctx) const override {
    const kernels::NormalizationKernels& k = kernels::normalization_or_scalar(ctx.isa);
    KernelFacts facts;
    facts.kernel = fmt::format("batch_norm_{}", isa_name(k.isa));
    if (activation_.kind != ActivationKind::kNone) facts.details["fused_activation"] = activation_name(activation_);
    return make_kernel(std::move(facts), [eps = static_cast<float>(epsilon_), act = activation_, &k](
                                             const RunContext& run, std::span<const TensorView> in,
                                             std::span<const TensorView> out, Workspace) {
      const Shape& x = in[0].shape();
      const int64_t batch = x[0], channels = x[1];
      if (batch * channels == 0) return;
      const float *scale = in[1].f32(), *shift = in[2].f32(), *mean = in[3].f32(), *var = in[4].f32();
      std::vector<float> a(static_cast<size_t>(channels)), b(static_cast<size_t>(channels));
      for (size_t c = 0; c < a.size(); ++c) {
        a[c] = scale[c] / std::sqrt(var[c] + eps);
        b[c] = shift[c] - mean[c] * a[c];
      }
      kernels::channel_affine(k, in[0].f32(), batch, channels, in[0].size() / (batch * channels), a.data(), b.data(),
                              out[0].f32(), run.num_threads, act);
    });
  }

 private:
  double epsilon_;
  Activation activation_;
};

}  // namespace

std::unique_ptr<Op> make_batch_normalization(const Node& node) {
  return std::make_unique<BatchNormOp>(node);
}

}  // namespace minfer
