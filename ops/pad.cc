// Pad: constant (the spec's mode), reflect, edge and wrap (opset 19), any rank, on
// float32, int64 or bool data. Pads come from the `pads` input (opset 11+, for the axes of
// the `axes` input from opset 18) or attribute (older); negative pads crop. 0 FLOPs.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ops/kernels/threads.h"
#include "ops/op_helpers.h"
#include "ops/strided_copy.h"

namespace minfer {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

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
    else if (mode == "wrap")
      mode_ = PadMode::kWrap;
    else
      throw UnsupportedError("attribute 'mode' has unsupported value '" + excerpt(mode) + "'");
    pads_attr_ = node.attrs.get_ints("pads");
    value_attr_ = static_cast<float>(node.attrs.get_data_float("value", 0.0));
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 4);
    if (in.size() > 2 && in[2].present && in[2].dtype() != in[0].dtype())
      throw OpError(fmt::format("constant_value is {}; it must be {} like the data", dtype_name(in[2].dtype()),
                                dtype_name(in[0].dtype())));
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
    return {{in[0].dtype(), y}};
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
    const DType dtype = sig.inputs[0].dtype();
    begin.resize(x.size());
    if (mode_ != PadMode::kConstant) {
      switch (dtype_size(dtype)) {
        case 1: return bind_by_rows<uint8_t>(begin, x, y);
        case 4: return bind_by_rows<uint32_t>(begin, x, y);
        default: return bind_by_rows<uint64_t>(begin, x, y);
      }
    }
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
        {}, [src, dst, dtype, value_attr = value_attr_,
             copy = StridedCopy(overlap, x_strides, y_strides, dtype_size(dtype))](
                const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          // constant_value (opset 11+) is an input like any other: it may be computed at run time.
          const bool given = in.size() > 2 && in[2].data;
          const int64_t n = out[0].size();
          switch (dtype) {
            case DType::kFloat32: std::fill_n(out[0].f32(), n, given ? in[2].f32()[0] : value_attr); break;
            case DType::kInt64: std::fill_n(out[0].as<int64_t>(), n, given ? in[2].as<int64_t>()[0] : 0); break;
            case DType::kBool: std::fill_n(out[0].as<uint8_t>(), n, given ? in[2].as<uint8_t>()[0] : 0); break;
          }
          copy.run(in[0].data, out[0].data, src, dst, ctx.num_threads);
        });
  }

 private:
  static constexpr size_t kMaxRank = 8;

  // Reflect, edge and wrap, row by row of the last axis: each axis maps an output index to its
  // source index once, at bind time; a row's outer indices pick its source row, whose
  // elements are copied whole into the row's middle, the pads on either side picked
  // through the last axis's map (per element only there). T: an unsigned type of the
  // element's size.
  template <typename T>
  std::unique_ptr<Kernel> bind_by_rows(const std::vector<int64_t>& begin, const Shape& x, const Shape& y) const {
    std::vector<std::vector<int64_t>> source(y.size());
    for (size_t d = 0; d < y.size(); ++d)
      for (int64_t i = 0; i < y[d]; ++i) {
        int64_t c = i - begin[d];
        if (c < 0 || c >= x[d]) {
          if (mode_ == PadMode::kEdge)
            c = c < 0 ? 0 : x[d] - 1;
          else if (mode_ == PadMode::kWrap)
            c = (c % x[d] + x[d]) % x[d];  // as if the data were a torus
          else
            c = c < 0 ? -c : 2 * (x[d] - 1) - c;  // reflect, the edge element not repeated
        }
        source[d].push_back(c);
      }
    return make_kernel({}, [source, y, x_strides = dense_strides(x), x_width = x.empty() ? 1 : x.back(),
                            left = begin.empty() ? 0 : begin.back()](const RunContext& ctx,
                                                                     std::span<const TensorView> in,
                                                                     std::span<const TensorView> out, Workspace) {
      const size_t rank = y.size();
      const int64_t width = rank ? y.back() : 1, rows = out[0].size() / width;
      const T* src = in[0].as<T>();
      T* dst = out[0].as<T>();
      const int team = kernels::threads_worth_starting(out[0].size(), rows, ctx.num_threads, kernels::Work::kStreaming);
      kernels::for_each_on_team(team, rows, [&](int64_t row) {
        int64_t from = 0;
        for (int64_t d = static_cast<int64_t>(rank) - 2, rest = row; d >= 0; rest /= y[d], --d)
          from += source[d][rest % y[d]] * x_strides[d];
        const T* s = src + from;
        T* t = dst + row * width;
        if (rank == 0) return std::memcpy(t, s, sizeof(T)), void();
        const std::vector<int64_t>& last = source[rank - 1];
        for (int64_t j = 0; j < left; ++j) t[j] = s[last[j]];
        std::memcpy(t + left, s, sizeof(T) * x_width);
        for (int64_t j = left + x_width; j < width; ++j) t[j] = s[last[j]];
      });
    });
  }

  // Begin pads of every axis, then end pads; from the `axes` input (opset 18) for those
  // axes only, the others unpadded.
  std::vector<int64_t> pads(std::span<const OpInput> in) const {
    std::vector<int64_t> p = in.size() > 1 && in[1].present ? constant_ints(in, 1, "pads") : pads_attr_;
    const int64_t rank = static_cast<int64_t>(in[0].shape().size());
    if (in.size() < 4 || !in[3].present) {
      if (std::ssize(p) != 2 * rank)
        throw OpError(fmt::format("pads has {} values, expected {} for rank {}", p.size(), 2 * rank, rank));
      return p;
    }
    const std::vector<int64_t> axes = constant_ints(in, 3, "axes");
    if (p.size() != 2 * axes.size())
      throw OpError(fmt::format("pads has {} values, expected {} for {} axes", p.size(), 2 * axes.size(), axes.size()));
    std::vector<int64_t> all(static_cast<size_t>(2 * rank), 0);
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t d = static_cast<size_t>(normalize_axis(axes[i], rank, "axes"));
      if (seen[d]) throw OpError(fmt::format("axis {} is given twice", axes[i]));
      seen[d] = true;
      all[d] = p[i];
      all[d + static_cast<size_t>(rank)] = p[i + axes.size()];
    }
    return all;
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
