// Pad: constant (the spec's mode), reflect and edge, any rank. Pads come from the
// `pads` input (opset 11+) or attribute (older); negative pads crop. 0 FLOPs.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "ops/op_helpers.h"
#include "ops/strided_copy.h"

namespace minfer {
namespace {

enum class PadMode { kConstant, kReflect, kEdge };

class PadOp final : public Op {
 public:
  explicit PadOp(const Node& node) {
    node.attrs.check_known({"mode", "pads", "value"});
    const std::string mode = node.attrs.get_string("mode", "constant");
    if (mode == "constant")
      mode_ = PadMode::kConstant;
    else if (mode == "reflect")
      mode_ = PadMode::kReflect;
    else if (mode == "edge")
      mode_ = PadMode::kEdge;
    else
      throw UnsupportedError("attribute 'mode' has unsupported value '" + excerpt(mode) + "'");
    pads_attr_ = node.attrs.get_ints("pads");
    value_attr_ = static_cast<float>(node.attrs.get_data_float("value", 0.0));
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 4);
    if (in[0].dtype() != DType::kFloat32 || (in.size() > 2 && in[2].present && in[2].dtype() != DType::kFloat32))
      throw UnsupportedError(fmt::format("{} data is not supported", dtype_name(in[0].dtype())));
    if (in.size() > 3 && in[3].present) throw UnsupportedError("the axes input is not supported");
    const Shape& x = in[0].shape();
    if (x.size() > kMaxRank)
      throw UnsupportedError(fmt::format("rank {} is above the supported {}", x.size(), kMaxRank));
    std::vector<int64_t> p = pads(in);
    if (in.size() > 2 && in[2].present && num_elements(in[2].shape()) != 1)
      throw OpError(fmt::format("constant_value must be a scalar, got {}", shape_str(in[2].shape())));
    Shape y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      y[i] = checked_add({x[i], p[i], p[i + x.size()]});
      if (y[i] <= 0) throw OpError(fmt::format("pads leave axis {} with size {}", i, y[i]));
      if (mode_ == PadMode::kReflect && (p[i] >= x[i] || p[i + x.size()] >= x[i]))
        throw OpError(fmt::format("reflect pads on axis {} must be smaller than its size {}", i, x[i]));
      if (mode_ != PadMode::kConstant && (p[i] < 0 || p[i + x.size()] < 0))
        throw UnsupportedError("negative pads are only supported in constant mode");
    }
    return {{DType::kFloat32, y}};
  }

  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = ~1u;  // pads, the constant value, axes
    return t;
  }

  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }

  // All pads zero copies the input, whatever the mode.
  bool is_identity(const OpSignature& sig) const override {
    const std::vector<int64_t> p = pads(sig.inputs);
    return std::all_of(p.begin(), p.end(), [](int64_t v) { return v == 0; });
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    std::vector<int64_t> begin = pads(sig.inputs);
    const Shape &x = sig.inputs[0].shape(), &y = sig.outputs[0].shape();
    begin.resize(x.size());
    if (mode_ != PadMode::kConstant)
      return make_kernel(
          {}, [begin, mode = mode_](const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
                                    Workspace) { pad_by_element(mode, begin, in, out); });
    // Constant: the value everywhere, then the input's overlap with the output (all of it,
    // less what negative pads crop) copied in as rows.
    const Shape x_strides = dense_strides(x), y_strides = dense_strides(y);
    Shape overlap(x.size());
    int64_t src = 0, dst = 0;
    for (size_t d = 0; d < x.size(); ++d) {
      overlap[d] = std::max<int64_t>(0, std::min(y[d], begin[d] + x[d]) - std::max<int64_t>(0, begin[d]));
      src += std::max<int64_t>(0, -begin[d]) * x_strides[d];
      dst += std::max<int64_t>(0, begin[d]) * y_strides[d];
    }
    return make_kernel(
        {}, [src, dst, value_attr = value_attr_, copy = StridedCopy(overlap, x_strides, y_strides, sizeof(float))](
                const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          // constant_value (opset 11+) is an input like any other: it may be computed at run time.
          const float value = in.size() > 2 && in[2].data ? in[2].f32()[0] : value_attr;
          std::fill_n(out[0].f32(), out[0].size(), value);
          copy.run(in[0].data, out[0].data, src, dst, ctx.num_threads);
        });
  }

 private:
  static constexpr size_t kMaxRank = 8;

  // Reflect and edge: each output element's source found axis by axis.
  static void pad_by_element(PadMode mode, const std::vector<int64_t>& begin, std::span<const TensorView> in,
                             std::span<const TensorView> out) {
    const Shape& xs = in[0].shape();
    const Shape& ys = out[0].shape();
    const size_t rank = ys.size();
    std::array<int64_t, kMaxRank> idx{};
    const int64_t total = out[0].size();
    for (int64_t i = 0; i < total; ++i) {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) {
        int64_t c = idx[d] - begin[d];
        if (c < 0 || c >= xs[d]) {
          if (mode == PadMode::kEdge)
            c = c < 0 ? 0 : xs[d] - 1;
          else
            c = c < 0 ? -c : 2 * (xs[d] - 1) - c;  // reflect, edge excluded
        }
        src = src * xs[d] + c;
      }
      out[0].f32()[i] = in[0].f32()[src];
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < ys[d]) break;
        idx[d] = 0;
      }
    }
  }

  std::vector<int64_t> pads(std::span<const OpInput> in) const {
    std::vector<int64_t> p = in.size() > 1 && in[1].present ? constant_ints(in, 1, "pads") : pads_attr_;
    if (p.size() != 2 * in[0].shape().size())
      throw OpError(fmt::format("pads has {} values, expected {} for rank {}", p.size(), 2 * in[0].shape().size(),
                                in[0].shape().size()));
    return p;
  }

  PadMode mode_ = PadMode::kConstant;
  std::vector<int64_t> pads_attr_;
  float value_attr_ = 0.0f;
};

}  // namespace

std::unique_ptr<Op> make_pad(const Node& node) {
  return std::make_unique<PadOp>(node);
}

}  // namespace minfer
