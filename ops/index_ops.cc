// Ops that pick elements by index, of any element type: Gather and GatherElements
// (indices int64, read at run time; negative ones count from the end), Slice (ONNX's
// clamping of starts and ends, any steps), Expand (numpy broadcasting to a shape), Tile
// (repeats per axis) and Trilu (a triangle kept). 0 FLOPs; their traffic is the data
// they read and write.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ops/broadcast.h"
#include "ops/kernels/threads.h"
#include "ops/op_helpers.h"
#include "ops/strided_copy.h"

namespace minfer {
namespace {

// y[i] = x[index(i)] for elements of `bytes` bytes.
template <typename Index>
void copy_indexed(const TensorView& x, const TensorView& y, Index index) {
  const int64_t bytes = dtype_size(y.type.dtype), n = y.size();
  const auto* src = static_cast<const std::byte*>(x.data);
  auto* dst = static_cast<std::byte*>(y.data);
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * bytes, src + index(i) * bytes, static_cast<size_t>(bytes));
}

// Throws OpError unless -dim <= index < dim; the index counted from the start.
int64_t checked_index(int64_t index, int64_t dim) {
  if (index < -dim || index >= dim)
    throw OpError(fmt::format("index {} is out of range for axis of size {}", index, dim));
  return index < 0 ? index + dim : index;
}

// Gather and GatherElements: data, int64 indices read at run time, and an axis of data.
class GatherBase : public Op {
 public:
  explicit GatherBase(const Node& node) {
    node.attrs.check_known({"axis"});
    axis_ = node.attrs.get_int("axis", 0);
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }

 protected:
  // Checks the inputs; the axis in [0, rank of data).
  int64_t checked_axis(std::span<const OpInput> in) const {
    check_input_count(in, 2, 2);
    if (in[1].dtype() != DType::kInt64)
      throw OpError(fmt::format("indices must be integers, got {}", dtype_name(in[1].dtype())));
    if (in[0].shape().empty()) throw OpError("data must have rank at least 1");
    return normalize_axis(axis_, static_cast<int64_t>(in[0].shape().size()));
  }

  int64_t axis_;
};

class GatherOp final : public GatherBase {
 public:
  using GatherBase::GatherBase;
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const int64_t axis = checked_axis(in);
    const Shape& data = in[0].shape();
    Shape shape(data.begin(), data.begin() + axis);
    shape.insert(shape.end(), in[1].shape().begin(), in[1].shape().end());
    shape.insert(shape.end(), data.begin() + axis + 1, data.end());
    return {{in[0].dtype(), shape}};
  }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& data = sig.inputs[0].shape();
    const int64_t axis = checked_axis(sig.inputs);
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < data.size(); ++d) inner *= data[d];
    int64_t outer = 1;
    for (size_t d = 0; d < static_cast<size_t>(axis); ++d) outer *= data[d];
    return make_kernel(
        {}, [outer, inner, dim = data[axis], count = num_elements(sig.inputs[1].shape())](
                const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          const int64_t* indices = in[1].as<int64_t>();
          // Checked before the team starts: an exception must not leave its region.
          for (int64_t k = 0; k < count; ++k) checked_index(indices[k], dim);
          // Each index picks a run of `inner` contiguous elements of every outer slice:
          // output run p = o * count + k. A team splits the output's bytes into ranges
          // of whole lines, whatever the runs: one index (Swin-T's q, k and v taken from
          // one tensor) is one long run, which one thread copied alone in 3.3x the time
          // on two threads as on one, half of it written in the other vCPU's cache.
          const int64_t run = inner * dtype_size(out[0].type.dtype), bytes = outer * count * run;
          const auto* src = static_cast<const std::byte*>(in[0].data);
          auto* dst = static_cast<std::byte*>(out[0].data);
          const auto copy = [&](int64_t from, int64_t to) {
            for (int64_t at = from; at < to;) {
              const int64_t p = at / run, skip = at % run, n = std::min(run - skip, to - at);
              const int64_t index = indices[p % count] < 0 ? indices[p % count] + dim : indices[p % count];
              std::memcpy(dst + at, src + (p / count * dim + index) * run + skip, static_cast<size_t>(n));
              at += n;
            }
          };
          const int64_t lines = (bytes + 63) / 64;
          const int team = kernels::threads_worth_starting(bytes / dtype_size(out[0].type.dtype), lines,
                                                           ctx.num_threads, kernels::Work::kStreaming);
          kernels::for_each_on_team(team, team, [&](int64_t t) {
            copy(std::min(bytes, lines * t / team * 64), std::min(bytes, lines * (t + 1) / team * 64));
          });
        });
  }
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
    const Shape x_strides = dense_strides(sig.inputs[0].shape());
    Shape strides(w.shape.size(), 0);
    int64_t offset = 0;
    for (size_t d = 0; d < w.shape.size(); ++d) {
      offset += w.begin[d] * x_strides[d];
      if (w.shape[d] > 1) strides[d] = w.step[d] * x_strides[d];  // a step may be INT64_MIN where one element is taken
    }
    return make_kernel(
        {}, [offset, copy = StridedCopy(w.shape, strides, dense_strides(w.shape), dtype_size(sig.inputs[0].dtype()))](
                const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          copy.run(in[0].data, out[0].data, offset, 0, ctx.num_threads);
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
    const Shape& y = sig.outputs[0].shape();
    return make_kernel({}, [copy = StridedCopy(y, BroadcastIndex(sig.inputs[0].shape(), y).strides(), dense_strides(y),
                                               dtype_size(sig.inputs[0].dtype()))](
                               const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
                               Workspace) { copy.run(in[0].data, out[0].data, 0, 0, ctx.num_threads); });
  }
};

// y[i_0, ..., i_axis, ...] = x[i_0, ..., indices[i_0, ..., i_axis, ...], ...]: indices
// of x's rank, the output of their shape.
class GatherElementsOp final : public GatherBase {
 public:
  using GatherBase::GatherBase;
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const int64_t axis = checked_axis(in);
    const Shape &data = in[0].shape(), &indices = in[1].shape();
    if (indices.size() != data.size())
      throw OpError(fmt::format("indices {} must have the rank of data {}", shape_str(indices), shape_str(data)));
    for (size_t d = 0; d < data.size(); ++d)
      if (static_cast<int64_t>(d) != axis && indices[d] > data[d])
        throw OpError(fmt::format("indices {} exceed data {} along axis {}", shape_str(indices), shape_str(data), d));
    return {{in[0].dtype(), indices}};
  }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& data = sig.inputs[0].shape();
    const auto axis = static_cast<size_t>(checked_axis(sig.inputs));
    return make_kernel(
        {}, [axis, dims = sig.outputs[0].shape(), src_strides = dense_strides(data),
             out_strides = dense_strides(sig.outputs[0].shape()), dim = data[axis]](
                const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          const int64_t* indices = in[1].as<int64_t>();
          copy_indexed(in[0], out[0], [&](int64_t i) {
            int64_t src = 0;
            for (size_t d = 0; d < dims.size(); ++d) {
              const int64_t at = d == axis ? checked_index(indices[i], dim) : i / out_strides[d] % dims[d];
              src += at * src_strides[d];
            }
            return src;
          });
        });
  }
};

// y[i] = x[i mod shape(x)] per axis, y's shape x's times repeats.
class TileOp final : public Op {
 public:
  explicit TileOp(const Node& node) { node.attrs.check_known({}); }
  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = 0b10;  // the repeats
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 2, 2);
    const Shape& x = in[0].shape();
    const std::vector<int64_t> repeats = constant_ints(in, 1, "repeats");
    if (repeats.size() != x.size())
      throw OpError(fmt::format("repeats has {} values for rank {}", repeats.size(), x.size()));
    Shape y(x.size());
    for (size_t d = 0; d < x.size(); ++d) {
      if (repeats[d] < 0) throw OpError(fmt::format("repeats[{}] is {}; it must not be negative", d, repeats[d]));
      y[d] = checked_mul({x[d], repeats[d]});
    }
    return {{in[0].dtype(), y}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    // Each axis as two: the repeat (the source's stride 0) and the source's own.
    const Shape &x = sig.inputs[0].shape(), &y = sig.outputs[0].shape();
    const Shape x_strides = dense_strides(x), y_strides = dense_strides(y);
    Shape dims, src, dst;
    for (size_t d = 0; d < x.size(); ++d) {
      const int64_t repeats = x[d] ? y[d] / x[d] : 0;
      dims.insert(dims.end(), {repeats, x[d]});
      src.insert(src.end(), {0, x_strides[d]});
      dst.insert(dst.end(), {x[d] * y_strides[d], y_strides[d]});
    }
    return make_kernel({}, [copy = StridedCopy(dims, src, dst, dtype_size(sig.inputs[0].dtype()))](
                               const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
                               Workspace) { copy.run(in[0].data, out[0].data, 0, 0, ctx.num_threads); });
  }
};

// Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of each matrix in the last
// two axes kept, the rest zero.
class TriluOp final : public Op {
 public:
  explicit TriluOp(const Node& node) {
    node.attrs.check_known({"upper"});
    upper_ = node.attrs.get_int("upper", 1) != 0;
  }
  OpTraits traits() const override {
    OpTraits t;
    t.inplace_input = 0;
    t.non_data_inputs = 0b10;  // k
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 2);
    if (in[0].shape().size() < 2)
      throw OpError(fmt::format("input {} must have rank 2 or more", shape_str(in[0].shape())));
    diagonal(in);
    return {in[0].type};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& x = sig.inputs[0].shape();
    return make_kernel(
        {}, [rows = x[x.size() - 2], cols = x.back(), k = diagonal(sig.inputs), upper = upper_](
                const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          const int64_t bytes = dtype_size(out[0].type.dtype), n = out[0].size();
          const auto* src = static_cast<const std::byte*>(in[0].data);
          auto* dst = static_cast<std::byte*>(out[0].data);
          for (int64_t i = 0; i < n; ++i) {
            const int64_t above = i % cols - i / cols % rows;  // j - i within its matrix
            const bool keep = upper ? above >= k : above <= k;
            if (!keep)
              std::memset(dst + i * bytes, 0, static_cast<size_t>(bytes));
            else if (dst != src)
              std::memcpy(dst + i * bytes, src + i * bytes, static_cast<size_t>(bytes));
          }
        });
  }

 private:
  static int64_t diagonal(std::span<const OpInput> in) {
    if (in.size() < 2 || !in[1].present) return 0;
    const std::vector<int64_t> k = constant_ints(in, 1, "k");
    if (k.size() != 1) throw OpError(fmt::format("k must hold one value, got {}", k.size()));
    return k[0];
  }

  bool upper_;
};

}  // namespace

std::unique_ptr<Op> make_trilu(const Node& node) {
  return std::make_unique<TriluOp>(node);
}
std::unique_ptr<Op> make_gather_elements(const Node& node) {
  return std::make_unique<GatherElementsOp>(node);
}
std::unique_ptr<Op> make_tile(const Node& node) {
  return std::make_unique<TileOp>(node);
}
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
