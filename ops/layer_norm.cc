// LayerNormalization (opset 17): each row of the dims from `axis` on is normalised to
// zero mean and unit variance, then scaled and shifted per element of the row:
//   y = (x - mean) / sqrt(var + epsilon) * scale + bias.
// Mean and InvStdDev, the optional outputs, are the row statistics. FLOPs as the opset
// 13 decomposition torch exports (which fuse_layer_norm turns into this op) counts them:
// per element 7 with a bias, 6 without (the mean's add, subtract, square, the variance's
// add, divide, multiply by scale, add bias), per row 2 (add epsilon, square root).
#include <fmt/format.h>

#include <cmath>

#include "ops/kernels/threads.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

struct NormRows {
  int64_t rows = 1, size = 1;
};

// Sums of a row in double, kLanes interleaved partial sums added up in a fixed order at
// the end: one chain of dependent adds took 5 cycles an element (ConvNeXt's 96-wide rows).
constexpr int64_t kLanes = 8;

template <class Term>
double row_sum(int64_t size, Term term) {
  double lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= size; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += term(i + l);
  for (; i < size; ++i) lane[i % kLanes] += term(i);
  double sum = 0.0;
  for (double v : lane) sum += v;
  return sum;
}

void normalize_row(const float* x, int64_t size, float eps, const float* scale, const float* bias, float* y,
                   float* mean_out, float* inv_std_out) {
  const float mean = static_cast<float>(row_sum(size, [&](int64_t i) { return double(x[i]); }) / double(size));
  const double squares = row_sum(size, [&](int64_t i) { return double(x[i] - mean) * double(x[i] - mean); });
  const float inv_std = 1.0f / std::sqrt(static_cast<float>(squares / static_cast<double>(size)) + eps);
  if (bias) {
    for (int64_t i = 0; i < size; ++i) y[i] = (x[i] - mean) * inv_std * scale[i] + bias[i];
  } else {
    for (int64_t i = 0; i < size; ++i) y[i] = (x[i] - mean) * inv_std * scale[i];
  }
  if (mean_out) *mean_out = mean;
  if (inv_std_out) *inv_std_out = inv_std;
}

class LayerNormOp final : public Op {
 public:
  explicit LayerNormOp(const Node& node) {
    node.attrs.check_known({"axis", "epsilon", "stash_type"});
    axis_ = node.attrs.get_int("axis", -1);
    epsilon_ = static_cast<float>(node.attrs.get_float("epsilon", 1e-5));
    if (node.attrs.get_int("stash_type", 1) != 1)
      throw UnsupportedError("stash_type other than 1 (float32) is not supported");
  }

  OpTraits traits() const override {
    OpTraits t;
    t.optional_outputs = 0b110;  // Mean, InvStdDev
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    rows(in);  // checks the inputs
    const Shape& x = in[0].shape();
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.size())));
    Shape stats = x;
    std::fill(stats.begin() + static_cast<std::ptrdiff_t>(axis), stats.end(), 1);
    return {in[0].type, {DType::kFloat32, stats}, {DType::kFloat32, stats}};
  }

  OpCost cost(const OpSignature& sig) const override {
    const NormRows r = rows(sig.inputs);
    const bool bias = sig.inputs.size() > 2 && sig.inputs[2].present;
    const CostExpr flops = CostExpr::of("FLOPs/element", bias ? 7 : 6) * CostExpr::of("elements", r.rows * r.size) +
                           CostExpr::of("FLOPs/row", 2) * CostExpr::of("rows", r.rows);
    return op_cost(*this, sig, 0, flops);
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    return make_kernel({}, [r = rows(sig.inputs), eps = epsilon_](const RunContext& ctx, std::span<const TensorView> in,
                                                                  std::span<const TensorView> out, Workspace) {
      const float* scale = in[1].f32();
      const float* bias = in.size() > 2 ? in[2].f32() : nullptr;
      float* means = out.size() > 1 ? out[1].f32() : nullptr;
      float* inv_stds = out.size() > 2 ? out[2].f32() : nullptr;
      // Rows are independent: split among threads (each row's sums in the same order).
      const int team =
          kernels::threads_worth_starting(r.rows * r.size * 4, r.rows, ctx.num_threads, kernels::Work::kStreaming);
      kernels::for_each_on_team(team, r.rows, [&](int64_t row) {
        normalize_row(in[0].f32() + row * r.size, r.size, eps, scale, bias, out[0].f32() + row * r.size,
                      means ? means + row : nullptr, inv_stds ? inv_stds + row : nullptr);
      });
    });
  }

 private:
  // The rows and their length; scale and bias must have one value per element of a row.
  NormRows rows(std::span<const OpInput> in) const {
    check_input_count(in, 2, 3);
    require_float(in);
    const Shape& x = in[0].shape();
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.size())));
    NormRows r;
    for (size_t d = 0; d < x.size(); ++d) (d < axis ? r.rows : r.size) *= x[d];
    for (size_t i = 1; i < in.size(); ++i) {
      if (!in[i].present) continue;
      Shape s = in[i].shape();
      while (!s.empty() && s.front() == 1 && s.size() > x.size() - axis) s.erase(s.begin());
      if (s != Shape(x.begin() + static_cast<std::ptrdiff_t>(axis), x.end()))
        throw UnsupportedError(fmt::format("input {} {} is not the normalised shape of X {} from axis {}", i,
                                           shape_str(in[i].shape()), shape_str(x), axis_));
    }
    return r;
  }

  int64_t axis_ = -1;
  float epsilon_ = 1e-5f;
};

}  // namespace

std::unique_ptr<Op> make_layer_normalization(const Node& node) {
  return std::make_unique<LayerNormOp>(node);
}

}  // namespace minfer
