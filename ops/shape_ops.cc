// Ops that only move data: Flatten, Reshape, Squeeze, Unsqueeze, Identity, Dropout
// (inference: identity) share their input's bytes; Concat and Transpose rearrange them.
// All cost 0 FLOPs; their traffic is what they read and write.
#include <array>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "ops/op.h"

namespace minfer {
namespace {

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what = "axis") {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw OpError(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return a;
}

// An op whose output holds exactly the input's elements in the same order.
class SameDataOp : public Op {
 public:
  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    ArgInfos data_only(in.begin(), in.begin() + 1);  // shape/axes inputs are not data
    return data_movement(data_only, out);
  }
  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float>) const override {
    if (out[0].data != in[0].data) std::memcpy(out[0].data, in[0].data, sizeof(float) * out[0].size());
  }
  int inplace_input() const override { return 0; }
};

class FlattenOp final : public SameDataOp {
 public:
  explicit FlattenOp(const Node& node) {
    node.attrs.check_known({"axis"});
    axis_ = node.attrs.get_int("axis", 1);
  }
  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    check_input_count(in, 1, 1);
    const Shape& x = in[0].shape;
    const int64_t rank = static_cast<int64_t>(x.size());
    const int64_t a = axis_ < 0 ? axis_ + rank : axis_;
    if (a < 0 || a > rank) throw OpError(fmt::format("axis {} is out of range for rank {}", axis_, rank));
    return {{num_elements(Shape(x.begin(), x.begin() + a)), num_elements(Shape(x.begin() + a, x.end()))}};
  }

 private:
  int64_t axis_;
};

class ReshapeOp final : public SameDataOp {
 public:
  explicit ReshapeOp(const Node& node) {
    node.attrs.check_known({"allowzero"});
    allow_zero_ = node.attrs.get_int("allowzero", 0) != 0;
  }
  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    check_input_count(in, 2, 2);
    const Shape& x = in[0].shape;
    Shape y = constant_ints(in, 1, "shape");
    int64_t infer_at = -1, known = 1;
    for (size_t i = 0; i < y.size(); ++i) {
      if (y[i] == 0 && !allow_zero_) {
        if (i >= x.size()) throw OpError(fmt::format("shape entry {} is 0 but the input has rank {}", i, x.size()));
        y[i] = x[i];
      }
      if (y[i] == -1) {
        if (infer_at >= 0) throw OpError("shape has more than one -1");
        infer_at = static_cast<int64_t>(i);
      } else if (y[i] < 0) {
        throw OpError(fmt::format("shape entry {} is {}", i, y[i]));
      } else {
        known = checked_mul({known, y[i]});
      }
    }
    const int64_t total = num_elements(x);
    if (infer_at >= 0) {
      if (known == 0 || total % known != 0)
        throw OpError(fmt::format("cannot reshape {} into {}", shape_str(x), shape_str(constant_ints(in, 1, "shape"))));
      y[infer_at] = total / known;
    }
    if (num_elements(y) != total)
      throw OpError(fmt::format("cannot reshape {} ({} elements) into {}", shape_str(x), total, shape_str(y)));
    return {y};
  }

 private:
  bool allow_zero_;
};

// Squeeze and Unsqueeze take axes from an attribute (opset < 13) or an input (13+).
std::vector<int64_t> axes_of(const ArgInfos& in, const std::vector<int64_t>& attr_axes) {
  if (in.size() > 1 && in[1].present) return constant_ints(in, 1, "axes");
  return attr_axes;
}

class SqueezeOp final : public SameDataOp {
 public:
  explicit SqueezeOp(const Node& node) {
    node.attrs.check_known({"axes"});
    axes_ = node.attrs.get_ints("axes");
  }
  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    check_input_count(in, 1, 2);
    const Shape& x = in[0].shape;
    std::vector<bool> drop(x.size(), false);
    std::vector<int64_t> axes = axes_of(in, axes_);
    if (axes.empty()) {
      for (size_t i = 0; i < x.size(); ++i) drop[i] = x[i] == 1;
    }
    for (int64_t a : axes) {
      const int64_t ax = normalize_axis(a, static_cast<int64_t>(x.size()));
      if (x[ax] != 1) throw OpError(fmt::format("cannot squeeze axis {} of size {}", a, x[ax]));
      drop[ax] = true;
    }
    Shape y;
    for (size_t i = 0; i < x.size(); ++i)
      if (!drop[i]) y.push_back(x[i]);
    return {y};
  }

 private:
  std::vector<int64_t> axes_;
};

class UnsqueezeOp final : public SameDataOp {
 public:
  explicit UnsqueezeOp(const Node& node) {
    node.attrs.check_known({"axes"});
    axes_ = node.attrs.get_ints("axes");
  }
  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    check_input_count(in, 1, 2);
    const Shape& x = in[0].shape;
    std::vector<int64_t> axes = axes_of(in, axes_);
    if (axes.empty()) throw OpError("axes are required");
    const int64_t rank = static_cast<int64_t>(x.size() + axes.size());
    std::vector<bool> inserted(rank, false);
    for (int64_t a : axes) {
      const int64_t ax = normalize_axis(a, rank);
      if (inserted[ax]) throw OpError(fmt::format("axis {} is repeated", a));
      inserted[ax] = true;
    }
    Shape y;
    size_t next = 0;
    for (int64_t i = 0; i < rank; ++i) y.push_back(inserted[i] ? 1 : x[next++]);
    return {y};
  }

 private:
  std::vector<int64_t> axes_;
};

class IdentityOp final : public SameDataOp {
 public:
  explicit IdentityOp(const Node& node) {
    if (node.op_type == "Dropout") {
      node.attrs.check_known({"seed", "ratio", "is_test"});
      if (node.outputs.size() > 1) throw UnsupportedError("the mask output is not supported (inference only)");
      dropout_ = true;
    } else {
      node.attrs.check_known({});
    }
  }
  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    // Dropout (opset 12+) may carry ratio and training_mode inputs; training must be off.
    check_input_count(in, 1, dropout_ ? 3 : 1);
    if (in.size() == 3 && in[2].present) {
      if (!in[2].constant) throw OpError("training_mode must be a constant");
      if (!in[2].constant->data.empty() && in[2].constant->data[0] != 0.0f)
        throw UnsupportedError("training_mode=true is not supported (inference only)");
    }
    return {in[0].shape};
  }

 private:
  bool dropout_ = false;
};

class ConcatOp final : public Op {
 public:
  explicit ConcatOp(const Node& node) {
    node.attrs.check_known({"axis"});
    if (!node.attrs.has("axis")) throw OpError("attribute 'axis' is required");
    axis_ = node.attrs.get_int("axis", 0);
  }
  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    if (in.empty()) throw OpError("Concat needs at least one input");
    Shape y = required_shape(in, 0, "input");
    const int64_t a = normalize_axis(axis_, static_cast<int64_t>(y.size()));
    for (size_t i = 1; i < in.size(); ++i) {
      const Shape& s = required_shape(in, i, "input");
      bool ok = s.size() == y.size();
      for (size_t d = 0; ok && d < s.size(); ++d) ok = static_cast<int64_t>(d) == a || s[d] == y[d];
      if (!ok)
        throw OpError(fmt::format("input {} has shape {}, incompatible with {} along axis {}", i, shape_str(s),
                                  shape_str(in[0].shape), axis_));
      y[a] = checked_add({y[a], s[a]});
    }
    return {y};
  }
  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override { return data_movement(in, out); }
  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float>) const override {
    const Shape& ys = out[0].shape;
    const size_t a = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(ys.size())));
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < a; ++d) outer *= ys[d];
    for (size_t d = a + 1; d < ys.size(); ++d) inner *= ys[d];
    int64_t offset = 0;  // along the axis, in elements of one outer slice
    for (const TensorView& t : in) {
      const int64_t chunk = t.shape[a] * inner;
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(out[0].data + o * ys[a] * inner + offset, t.data + o * chunk, sizeof(float) * chunk);
      offset += chunk;
    }
  }

 private:
  int64_t axis_;
};

class TransposeOp final : public Op {
 public:
  explicit TransposeOp(const Node& node) {
    node.attrs.check_known({"perm"});
    perm_attr_ = node.attrs.get_ints("perm");
  }
  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    check_input_count(in, 1, 1);
    const Shape& x = in[0].shape;
    std::vector<int64_t> p = perm(x.size());
    Shape y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[p[i]];
    return {y};
  }
  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override { return data_movement(in, out); }
  void prepare(const ArgInfos& in, const std::vector<Shape>& out) override {
    const Shape& x = in[0].shape;
    std::vector<int64_t> p = perm(x.size());
    Shape in_strides(x.size(), 1);
    for (size_t i = x.size(); i-- > 1;) in_strides[i - 1] = in_strides[i] * x[i];
    out_dims_ = out[0];
    src_strides_.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) src_strides_[i] = in_strides[p[i]];
  }
  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float>) const override {
    const int64_t total = out[0].size();
    const size_t rank = out_dims_.size();
    std::array<int64_t, kMaxRank> idx{};
    int64_t src = 0;
    for (int64_t i = 0; i < total; ++i) {
      out[0].data[i] = in[0].data[src];
      // Odometer increment over the output index, tracking the source offset.
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < out_dims_[d]) {
          src += src_strides_[d];
          break;
        }
        src -= (out_dims_[d] - 1) * src_strides_[d];
        idx[d] = 0;
      }
    }
  }

 private:
  std::vector<int64_t> perm(size_t rank) const {
    std::vector<int64_t> p = perm_attr_;
    if (p.empty()) {
      p.resize(rank);
      std::iota(p.rbegin(), p.rend(), 0);
    }
    if (p.size() != rank) throw OpError(fmt::format("perm has {} entries for rank {}", p.size(), rank));
    if (rank > kMaxRank) throw UnsupportedError(fmt::format("rank {} is above the supported {}", rank, kMaxRank));
    std::vector<bool> seen(rank, false);
    for (int64_t v : p) {
      if (v < 0 || v >= static_cast<int64_t>(rank) || seen[v]) throw OpError("perm is not a permutation");
      seen[v] = true;
    }
    return p;
  }

  static constexpr size_t kMaxRank = 8;  // the run keeps its index on the stack
  std::vector<int64_t> perm_attr_;
  Shape out_dims_, src_strides_;
};

}  // namespace

std::unique_ptr<Op> make_flatten(const Node& node) { return std::make_unique<FlattenOp>(node); }
std::unique_ptr<Op> make_reshape(const Node& node) { return std::make_unique<ReshapeOp>(node); }
std::unique_ptr<Op> make_squeeze(const Node& node) { return std::make_unique<SqueezeOp>(node); }
std::unique_ptr<Op> make_unsqueeze(const Node& node) { return std::make_unique<UnsqueezeOp>(node); }
std::unique_ptr<Op> make_identity(const Node& node) { return std::make_unique<IdentityOp>(node); }
std::unique_ptr<Op> make_concat(const Node& node) { return std::make_unique<ConcatOp>(node); }
std::unique_ptr<Op> make_transpose(const Node& node) { return std::make_unique<TransposeOp>(node); }

}  // namespace minfer
