// Pad: constant (the spec's mode), reflect and edge, any rank. Pads come from the
// `pads` input (opset 11+) or attribute (older); negative pads crop. 0 FLOPs.
#include <array>

#include <fmt/format.h>

#include "ops/op.h"

namespace minfer {
namespace {

enum class PadMode { kConstant, kReflect, kEdge };

class PadOp final : public Op {
 public:
  explicit PadOp(const Node& node) {
    node.attrs.check_known({"mode", "pads", "value"});
    const std::string mode = node.attrs.get_string("mode", "constant");
    if (mode == "constant") mode_ = PadMode::kConstant;
    else if (mode == "reflect") mode_ = PadMode::kReflect;
    else if (mode == "edge") mode_ = PadMode::kEdge;
    else throw UnsupportedError("attribute 'mode' has unsupported value '" + excerpt(mode) + "'");
    pads_attr_ = node.attrs.get_ints("pads");
    value_attr_ = static_cast<float>(node.attrs.get_float("value", 0.0));
  }

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    check_input_count(in, 1, 4);
    if (in.size() > 3 && in[3].present) throw UnsupportedError("the axes input is not supported");
    const Shape& x = in[0].shape;
    if (x.size() > kMaxRank) throw UnsupportedError(fmt::format("rank {} is above the supported {}", x.size(), kMaxRank));
    std::vector<int64_t> p = pads(in);
    if (in.size() > 2 && in[2].present && num_elements(in[2].shape) != 1)
      throw OpError(fmt::format("constant_value must be a scalar, got {}", shape_str(in[2].shape)));
    Shape y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      y[i] = checked_add({x[i], p[i], p[i + x.size()]});
      if (y[i] <= 0) throw OpError(fmt::format("pads leave axis {} with size {}", i, y[i]));
      if (mode_ == PadMode::kReflect && (p[i] >= x[i] || p[i + x.size()] >= x[i]))
        throw OpError(fmt::format("reflect pads on axis {} must be smaller than its size {}", i, x[i]));
      if (mode_ != PadMode::kConstant && (p[i] < 0 || p[i + x.size()] < 0))
        throw UnsupportedError("negative pads are only supported in constant mode");
    }
    return {y};
  }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    ArgInfos data_only(in.begin(), in.begin() + 1);
    return data_movement(data_only, out);
  }

  void prepare(const ArgInfos& in, const std::vector<Shape>&) override {
    begin_ = pads(in);
    begin_.resize(in[0].shape.size());
  }

  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float>) const override {
    const Shape& xs = in[0].shape;
    const Shape& ys = out[0].shape;
    const size_t rank = ys.size();
    // constant_value (opset 11+) is an input like any other: it may be computed at run time.
    const float value = in.size() > 2 && in[2].data ? in[2].data[0] : value_attr_;
    std::array<int64_t, kMaxRank> idx{};
    const int64_t total = out[0].size();
    for (int64_t i = 0; i < total; ++i) {
      int64_t src = 0;
      bool inside = true;
      for (size_t d = 0; d < rank; ++d) {
        int64_t c = idx[d] - begin_[d];
        if (c < 0 || c >= xs[d]) {
          if (mode_ == PadMode::kConstant) {
            inside = false;
            break;
          }
          if (mode_ == PadMode::kEdge) c = c < 0 ? 0 : xs[d] - 1;
          else c = c < 0 ? -c : 2 * (xs[d] - 1) - c;  // reflect, edge excluded
        }
        src = src * xs[d] + c;
      }
      out[0].data[i] = inside ? in[0].data[src] : value;
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < ys[d]) break;
        idx[d] = 0;
      }
    }
  }

 private:
  static constexpr size_t kMaxRank = 8;

  std::vector<int64_t> pads(const ArgInfos& in) const {
    std::vector<int64_t> p = in.size() > 1 && in[1].present ? constant_ints(in, 1, "pads") : pads_attr_;
    if (p.size() != 2 * in[0].shape.size())
      throw OpError(fmt::format("pads has {} values, expected {} for rank {}", p.size(), 2 * in[0].shape.size(),
                                in[0].shape.size()));
    return p;
  }

  PadMode mode_ = PadMode::kConstant;
  std::vector<int64_t> pads_attr_;
  float value_attr_ = 0.0f;
  std::vector<int64_t> begin_;
};

}  // namespace

std::unique_ptr<Op> make_pad(const Node& node) { return std::make_unique<PadOp>(node); }

}  // namespace minfer
