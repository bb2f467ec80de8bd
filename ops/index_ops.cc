// Ops that pick elements by index, of any element type: Gather (indices int64, negative
// ones count from the end), Slice (ONNX's clamping of starts and ends, any steps) and
// Expand (numpy broadcasting to a shape). 0 FLOPs; their traffic is the data they read
// and write.
#include <fmt/format.h>

#include <cstring>

#include "ops/broadcast.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

Shape strides_of(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// y[i] = x[index(i)] for elements of `bytes` bytes.
template <typename Index>
void copy_indexed(const TensorView& x, const TensorView& y, Index index) {
  const int64_t bytes = dtype_size(y.type.dtype), n = y.size();
  const auto* src = static_cast<const std::byte*>(x.data);
  auto* dst = static_cast<std::byte*>(y.data);
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * bytes, src + index(i) * bytes, static_cast<size_t>(bytes));
}

class GatherOp final : public Op {
 public:
  explicit GatherOp(const Node& node) {
    node.attrs.check_known({"axis"});
    axis_ = node.attrs.get_int("axis", 0);
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 2, 2);
    if (in[1].dtype() != DType::kInt64)
      throw OpError(fmt::format("indices must be integers, got {}", dtype_name(in[1].dtype())));
    const Shape& data = in[0].shape();
    if (data.empty()) throw OpError("data must have rank at least 1");
    const int64_t axis = normalize_axis(axis_, static_cast<int64_t>(data.size()));
    Shape shape(data.begin(), data.begin() + axis);
    shape.insert(shape.end(), in[1].shape().begin(), in[1].shape().end());
    shape.insert(shape.end(), data.begin() + axis + 1, data.end());
    return {{in[0].dtype(), shape}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& data = sig.inputs[0].shape();
    const int64_t axis = normalize_axis(axis_, static_cast<int64_t>(data.size()));
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < data.size(); ++d) inner *= data[d];
    return make_kernel(
        {}, [inner, dim = data[axis], count = num_elements(sig.inputs[1].shape())](
                const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          const int64_t* indices = in[1].as<int64_t>();
          for (int64_t k = 0; k < count; ++k)
            if (indices[k] < -dim || indices[k] >= dim)
              throw OpError(fmt::format("index {} is out of range for axis of size {}", indices[k], dim));
          copy_indexed(in[0], out[0], [&](int64_t i) {
            const int64_t within = i % inner, k = i / inner % count, o = i / (inner * count);
            const int64_t index = indices[k] < 0 ? indices[k] + dim : indices[k];
            return (o * dim + index) * inner + within;
          });
        });
  }

 private:
  int64_t axis_;
};

// Slice's per-axis window after ONNX's clamping.
struct SliceWindow {
  Shape begin, step, shape;
};

class SliceOp final : public Op {
 public:
  explicit SliceOp(const Node& node) { node.attrs.check_known({}); }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const SliceWindow w = window(in);
    return {{in[0].dtype(), w.shape}};
  }
  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = ~1u;  // starts, ends, axes, steps
    return t;
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const SliceWindow w = window(sig.inputs);
    return make_kernel(
        {}, [w, src_strides = strides_of(sig.inputs[0].shape()), out_strides = strides_of(w.shape)](
                const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          copy_indexed(in[0], out[0], [&](int64_t i) {
            int64_t src = 0;
            for (size_t d = 0; d < w.shape.size(); ++d)
              src += (w.begin[d] + (i / out_strides[d]) % w.shape[d] * w.step[d]) * src_strides[d];
            return src;
          });
        });
  }

 private:
  static SliceWindow window(std::span<const OpInput> in) {
    check_input_count(in, 3, 5);
    const Shape& data = in[0].shape();
    const int64_t rank = static_cast<int64_t>(data.size());
    const std::vector<int64_t> starts = constant_ints(in, 1, "starts"), ends = constant_ints(in, 2, "ends");
    std::vector<int64_t> axes, steps;
    if (in.size() > 3 && in[3].present) axes = constant_ints(in, 3, "axes");
    if (in.size() > 4 && in[4].present) steps = constant_ints(in, 4, "steps");
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      throw OpError("starts, ends, axes and steps must have the same length");
    SliceWindow w{Shape(rank, 0), Shape(rank, 1), data};
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < starts.size(); ++i) {
      const int64_t a = normalize_axis(axes[i], rank);
      if (seen[a]) throw OpError(fmt::format("axis {} is repeated", axes[i]));
      seen[a] = true;
      const int64_t dim = data[a], s = steps[i];
      if (s == 0) throw OpError("steps must not be 0");
      // ONNX's clamping: negative values count from the end, then clamp to the axis
      // ([0, dim] going forward, [-1, dim-1] going backward).
      int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
      int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
      if (s > 0) {
        b = std::clamp(b, int64_t{0}, dim);
        e = std::clamp(e, int64_t{0}, dim);
        w.shape[a] = e > b ? (e - b - 1) / s + 1 : 0;
      } else {
        b = std::clamp(b, int64_t{0}, dim - 1);
        e = std::clamp(e, int64_t{-1}, dim - 1);
        w.shape[a] = b > e ? (s == INT64_MIN ? 1 : (b - e - 1) / -s + 1) : 0;
      }
      w.begin[a] = b;
      w.step[a] = s;
    }
    return w;
  }
};

class ExpandOp final : public Op {
 public:
  explicit ExpandOp(const Node& node) { node.attrs.check_known({}); }
  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = 0b10;  // the shape
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 2, 2);
    return {{in[0].dtype(), broadcast_shapes(in[0].shape(), constant_ints(in, 1, "shape"))}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    return make_kernel({}, [index = BroadcastIndex(sig.inputs[0].shape(), sig.outputs[0].shape())](
                               const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
                               Workspace) { copy_indexed(in[0], out[0], [&](int64_t i) { return index.source(i); }); });
  }
};

}  // namespace

std::unique_ptr<Op> make_gather(const Node& node) {
  return std::make_unique<GatherOp>(node);
}
std::unique_ptr<Op> make_slice(const Node& node) {
  return std::make_unique<SliceOp>(node);
}
std::unique_ptr<Op> make_expand(const Node& node) {
  return std::make_unique<ExpandOp>(node);
}

}  // namespace minfer
