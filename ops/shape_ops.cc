// Ops that only move data, of any element type: Flatten, Reshape, Squeeze, Unsqueeze,
// Identity, Dropout (inference: identity; its optional mask all true) keep their input's
// bytes (in place when the planner allows); Concat, Split, Transpose, DepthToSpace and
// SpaceToDepth rearrange them. All cost 0 FLOPs; their traffic is the data they read and
// write (a shape or axes input is not data).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "ops/blocked_layout.h"
#include "ops/op_helpers.h"
#include "ops/strided_copy.h"

namespace minfer {
namespace {

// An op whose output holds exactly the input's elements in the same order.
class SameDataOp : public Op {
 public:
  OpTraits traits() const override {
    OpTraits t;
    t.inplace_input = 0;
    t.non_data_inputs = ~1u;  // a shape, axes, or Dropout's ratio and training mode
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const Shape shape = output_shape(in);  // checks the inputs first
    return {{in[0].dtype(), shape}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature&, const BindContext&) const override {
    return make_kernel(
        {}, [](const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          if (out[0].data != in[0].data && out[0].size() > 0)
            std::memcpy(out[0].data, in[0].data, static_cast<size_t>(dtype_size(out[0].type.dtype) * out[0].size()));
        });
  }

 protected:
  virtual Shape output_shape(std::span<const OpInput> in) const = 0;
};

class FlattenOp final : public SameDataOp {
 public:
  explicit FlattenOp(const Node& node) {
    node.attrs.check_known({"axis"});
    axis_ = node.attrs.get_int("axis", 1);
  }
  Shape output_shape(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    const Shape& x = in[0].shape();
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
  Shape output_shape(std::span<const OpInput> in) const override {
    check_input_count(in, 2, 2);
    const Shape& x = in[0].shape();
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
std::vector<int64_t> axes_of(std::span<const OpInput> in, const std::vector<int64_t>& attr_axes) {
  if (in.size() > 1 && in[1].present) return constant_ints(in, 1, "axes");
  return attr_axes;
}

class SqueezeOp final : public SameDataOp {
 public:
  explicit SqueezeOp(const Node& node) {
    node.attrs.check_known({"axes"});
    axes_ = node.attrs.get_ints("axes");
  }
  Shape output_shape(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 2);
    const Shape& x = in[0].shape();
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
  Shape output_shape(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 2);
    const Shape& x = in[0].shape();
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
      dropout_ = true;
    } else {
      node.attrs.check_known({});
    }
  }
  OpTraits traits() const override {
    OpTraits t = SameDataOp::traits();
    t.identity = true;
    t.elementwise = true;
    if (dropout_) t.optional_outputs = 0b10;  // the mask
    return t;
  }
  // Dropout's optional mask: bool, of the input's shape, all true at inference.
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    std::vector<TensorType> out = SameDataOp::infer(in);
    if (dropout_) out.push_back({DType::kBool, out[0].shape});
    return out;
  }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    if (sig.outputs.size() < 2 || !sig.outputs[1].present) return SameDataOp::bind(sig, ctx);
    return make_kernel(
        {}, [](const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          if (out[0].size() == 0) return;  // folding may meet empty tensors
          if (out[0].data != in[0].data)
            std::memcpy(out[0].data, in[0].data, static_cast<size_t>(dtype_size(out[0].type.dtype) * out[0].size()));
          std::memset(out[1].data, 1, static_cast<size_t>(out[1].size()));
        });
  }
  Shape output_shape(std::span<const OpInput> in) const override {
    // Dropout (opset 12+) may carry ratio and training_mode inputs. Training drops at
    // random, but with a ratio of 0 it keeps everything, mask all true, as inference does
    // (what torch exports for F.dropout(p=0.0): Swin-T's attention).
    check_input_count(in, 1, dropout_ ? 3 : 1);
    if (in.size() == 3 && in[2].present) {
      if (!in[2].constant) throw OpError("training_mode must be a constant");
      const bool zero_ratio =
          in[1].present && in[1].constant && in[1].constant->size() == 1 && in[1].constant->number(0) == 0;
      if (in[2].constant->size() > 0 && in[2].constant->number(0) != 0 && !zero_ratio)
        throw UnsupportedError("training_mode=true is not supported (inference only) unless the ratio is a constant 0");
    }
    return in[0].shape();
  }

 private:
  bool dropout_ = false;
};

class ConcatOp final : public Op {
 public:
  explicit ConcatOp(const Node& node) {
    node.attrs.check_known({"axis", kBlockedInputAttr, kBlockedOutputAttr});
    if (!node.attrs.has("axis")) throw OpError("attribute 'axis' is required");
    axis_ = node.attrs.get_int("axis", 0);
    // Set by blocked_layout: the inputs and the output are NCHWc, joined along the blocks.
    lanes_ = node.attrs.get_int(kBlockedInputAttr, 0);
    if (lanes_ != node.attrs.get_int(kBlockedOutputAttr, 0))
      throw OpError("attributes 'blocked_input' and 'blocked_output' must be equal");
    if (lanes_ && axis_ != 1) throw OpError("an NCHWc Concat joins along axis 1");
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    if (in.empty()) throw OpError("Concat needs at least one input");
    Shape y = required_shape(in, 0, "input");
    if (lanes_)  // every input 5-D with c lanes last (their channel blocks are joined)
      for (size_t i = 0; i < in.size(); ++i) unblocked_shape(required_shape(in, i, "input"), lanes_);
    const int64_t a = normalize_axis(axis_, static_cast<int64_t>(y.size()));
    for (size_t i = 1; i < in.size(); ++i) {
      const Shape& s = required_shape(in, i, "input");
      bool ok = s.size() == y.size() && in[i].dtype() == in[0].dtype();
      for (size_t d = 0; ok && d < s.size(); ++d) ok = static_cast<int64_t>(d) == a || s[d] == y[d];
      if (!ok)
        throw OpError(fmt::format("input {} ({}) is incompatible with input 0 ({}) along axis {}", i,
                                  type_str(in[i].type), type_str(in[0].type), axis_));
      y[a] = checked_add({y[a], s[a]});
    }
    return {{in[0].dtype(), y}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  // Channels joined in whole blocks are NCHWc's blocks joined: the same copies.
  BlockedLayoutSupport blocked_layout(const OpSignature& sig, Isa isa) const override {
    const int64_t lanes = blocked_lanes(isa);
    if (!lanes || sig.inputs.empty()) return {};
    for (const OpInput& in : sig.inputs) {
      const Shape& s = in.shape();
      if (!in.present || in.constant || in.dtype() != DType::kFloat32 || s.size() != 4 || s[1] % lanes != 0) return {};
    }
    if (normalize_axis(axis_, 4) != 1) return {};
    BlockedLayoutSupport support;
    support.lanes = lanes;
    support.input = support.output = support.preferred = support.same_layout = true;
    return support;
  }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& ys = sig.outputs[0].shape();
    const size_t a = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(ys.size())));
    int64_t outer = 1, inner = dtype_size(sig.outputs[0].type.dtype);  // inner counts bytes
    for (size_t d = 0; d < a; ++d) outer *= ys[d];
    for (size_t d = a + 1; d < ys.size(); ++d) inner *= ys[d];
    KernelFacts facts;
    if (outer == 1) {  // each input one run of the output: the planner may put it there
      int64_t offset = 0;
      for (const OpInput& in : sig.inputs) {
        facts.input_offsets.push_back(offset);
        offset += in.shape()[a] * inner;
      }
      facts.details["copies"] = "none for an input the memory plan places in the output";
    }
    return make_kernel(std::move(facts),
                       [outer, inner, a, row = ys[a] * inner](const RunContext&, std::span<const TensorView> in,
                                                              std::span<const TensorView> out, Workspace) {
                         auto* y = static_cast<std::byte*>(out[0].data);
                         int64_t offset = 0;  // along the axis, in bytes of one outer slice
                         for (const TensorView& t : in) {
                           const int64_t chunk = t.shape()[a] * inner;
                           const auto* x = static_cast<const std::byte*>(t.data);
                           if (outer != 1 || x != y + offset)  // else its producer wrote it there
                             for (int64_t o = 0; o < outer; ++o)
                               std::memcpy(y + o * row + offset, x + o * chunk, static_cast<size_t>(chunk));
                           offset += chunk;
                         }
                       });
  }

 private:
  int64_t axis_;
  int64_t lanes_ = 0;  // of NCHWc inputs and output, 0 for any other layout
};

// The kernel that transposes a tensor of shape `x` by `perm` (y's axis i is x's axis
// perm[i]); the data may be viewed in more axes than its tensors have (DepthToSpace).
std::unique_ptr<Kernel> transpose_kernel(const Shape& x, const std::vector<int64_t>& perm, DType dtype) {
  const Shape in_strides = dense_strides(x);
  Shape dims(x.size()), src_strides(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    dims[i] = x[perm[i]];
    src_strides[i] = in_strides[perm[i]];
  }
  return make_kernel({}, [copy = StridedCopy(dims, src_strides, dense_strides(dims), dtype_size(dtype))](
                             const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
                             Workspace) { copy.run(in[0].data, out[0].data, 0, 0, ctx.num_threads); });
}

class TransposeOp final : public Op {
 public:
  explicit TransposeOp(const Node& node) {
    node.attrs.check_known({"perm"});
    perm_attr_ = node.attrs.get_ints("perm");
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    const Shape& x = in[0].shape();
    std::vector<int64_t> p = perm(x.size());
    Shape y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[p[i]];
    return {{in[0].dtype(), y}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    return transpose_kernel(sig.inputs[0].shape(), perm(sig.inputs[0].shape().size()), sig.inputs[0].dtype());
  }

 private:
  std::vector<int64_t> perm(size_t rank) const {
    std::vector<int64_t> p = perm_attr_;
    if (p.empty()) {
      p.resize(rank);
      std::iota(p.rbegin(), p.rend(), 0);
    }
    if (p.size() != rank) throw OpError(fmt::format("perm has {} entries for rank {}", p.size(), rank));
    if (rank > 8) throw UnsupportedError(fmt::format("rank {} is above the supported 8", rank));
    std::vector<bool> seen(rank, false);
    for (int64_t v : p) {
      if (v < 0 || v >= static_cast<int64_t>(rank) || seen[v]) throw OpError("perm is not a permutation");
      seen[v] = true;
    }
    return p;
  }

  std::vector<int64_t> perm_attr_;
};

// DepthToSpace (modes DCR and CRD) and SpaceToDepth on N x C x H x W with block b: a
// transpose of the input viewed in six axes.
class BlockRearrangeOp final : public Op {
 public:
  explicit BlockRearrangeOp(const Node& node) : to_space_(node.op_type == "DepthToSpace") {
    if (to_space_)
      node.attrs.check_known({"blocksize", "mode"});
    else
      node.attrs.check_known({"blocksize"});
    if (!node.attrs.has("blocksize")) throw OpError("attribute 'blocksize' is required");
    block_ = node.attrs.get_int("blocksize", 0);
    if (block_ < 1) throw OpError(fmt::format("attribute 'blocksize' must be positive, got {}", block_));
    const std::string mode = node.attrs.get_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD")
      throw OpError(fmt::format("attribute 'mode' must be DCR or CRD, got '{}'", mode));
    crd_ = mode == "CRD";
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    const Shape& x = in[0].shape();
    if (x.size() != 4) throw OpError(fmt::format("input must be N x C x H x W, got {}", shape_str(x)));
    const int64_t b2 = checked_mul({block_, block_});
    if (to_space_) {
      if (x[1] % b2 != 0) throw OpError(fmt::format("{} channels are not a multiple of blocksize^2 = {}", x[1], b2));
      return {{in[0].dtype(), {x[0], x[1] / b2, checked_mul({x[2], block_}), checked_mul({x[3], block_})}}};
    }
    if (x[2] % block_ != 0 || x[3] % block_ != 0)
      throw OpError(fmt::format("height and width {}x{} are not multiples of blocksize {}", x[2], x[3], block_));
    return {{in[0].dtype(), {x[0], checked_mul({x[1], b2}), x[2] / block_, x[3] / block_}}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& x = sig.inputs[0].shape();
    const int64_t n = x[0], c = x[1], h = x[2], w = x[3], b = block_;
    if (!to_space_) return transpose_kernel({n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, sig.inputs[0].dtype());
    if (crd_) return transpose_kernel({n, c / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3}, sig.inputs[0].dtype());
    return transpose_kernel({n, b, b, c / (b * b), h, w}, {0, 3, 4, 1, 5, 2}, sig.inputs[0].dtype());
  }

 private:
  bool to_space_, crd_ = false;
  int64_t block_;
};

// Split along an axis into the node's outputs: sizes from the split input (opset 13),
// the split attribute (before 13), or equal parts (num_outputs, opset 18: the last part
// may be smaller).
class SplitOp final : public Op {
 public:
  explicit SplitOp(const Node& node) : outputs_(static_cast<int64_t>(node.outputs.size())) {
    node.attrs.check_known({"axis", "split", "num_outputs"});
    axis_ = node.attrs.get_int("axis", 0);
    split_attr_ = node.attrs.get_ints("split");
    if (node.attrs.has("num_outputs") && node.attrs.get_int("num_outputs", 0) != outputs_)
      throw OpError(fmt::format("attribute 'num_outputs' is {} but the node has {} outputs",
                                node.attrs.get_int("num_outputs", 0), outputs_));
    uneven_ = node.attrs.has("num_outputs");
  }
  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = 0b10;  // the split sizes
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 2);
    const Shape& x = in[0].shape();
    const int64_t axis = normalize_axis(axis_, static_cast<int64_t>(x.size()));
    std::vector<TensorType> out;
    for (int64_t part : parts(in, x[axis])) {
      Shape y = x;
      y[axis] = part;
      out.push_back({in[0].dtype(), y});
    }
    return out;
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& x = sig.inputs[0].shape();
    const size_t a = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.size())));
    int64_t outer = 1, inner = dtype_size(sig.inputs[0].dtype());  // inner counts bytes
    for (size_t d = 0; d < a; ++d) outer *= x[d];
    for (size_t d = a + 1; d < x.size(); ++d) inner *= x[d];
    return make_kernel({}, [outer, inner, a, row = x[a] * inner](const RunContext&, std::span<const TensorView> in,
                                                                 std::span<const TensorView> out, Workspace) {
      const auto* x = static_cast<const std::byte*>(in[0].data);
      int64_t offset = 0;  // along the axis, in bytes of one outer slice
      for (const TensorView& t : out) {
        const int64_t chunk = t.shape()[a] * inner;
        for (int64_t o = 0; o < outer; ++o)
          std::memcpy(static_cast<std::byte*>(t.data) + o * chunk, x + o * row + offset, static_cast<size_t>(chunk));
        offset += chunk;
      }
    });
  }

 private:
  std::vector<int64_t> parts(std::span<const OpInput> in, int64_t dim) const {
    std::vector<int64_t> sizes = split_attr_;
    if (in.size() > 1 && in[1].present) sizes = constant_ints(in, 1, "split");
    if (sizes.empty()) {
      if (outputs_ < 1) throw OpError("Split needs at least one output");
      const int64_t part = uneven_ ? (dim + outputs_ - 1) / outputs_ : dim / outputs_;
      if (!uneven_ && dim % outputs_ != 0)
        throw OpError(fmt::format("axis of size {} does not split into {} equal parts", dim, outputs_));
      for (int64_t i = 0; i < outputs_; ++i) sizes.push_back(std::max<int64_t>(0, std::min(part, dim - i * part)));
      return sizes;
    }
    if (static_cast<int64_t>(sizes.size()) != outputs_)
      throw OpError(fmt::format("split has {} sizes for {} outputs", sizes.size(), outputs_));
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) throw OpError(fmt::format("split size {} is negative", s));
      total = checked_add({total, s});
    }
    if (total != dim) throw OpError(fmt::format("split sizes add up to {}, the axis has {}", total, dim));
    return sizes;
  }

  int64_t outputs_, axis_;
  std::vector<int64_t> split_attr_;
  bool uneven_ = false;
};

}  // namespace

std::unique_ptr<Op> make_depth_to_space(const Node& node) {
  return std::make_unique<BlockRearrangeOp>(node);
}
std::unique_ptr<Op> make_space_to_depth(const Node& node) {
  return std::make_unique<BlockRearrangeOp>(node);
}
std::unique_ptr<Op> make_split(const Node& node) {
  return std::make_unique<SplitOp>(node);
}
std::unique_ptr<Op> make_flatten(const Node& node) {
  return std::make_unique<FlattenOp>(node);
}
std::unique_ptr<Op> make_reshape(const Node& node) {
  return std::make_unique<ReshapeOp>(node);
}
std::unique_ptr<Op> make_squeeze(const Node& node) {
  return std::make_unique<SqueezeOp>(node);
}
std::unique_ptr<Op> make_unsqueeze(const Node& node) {
  return std::make_unique<UnsqueezeOp>(node);
}
std::unique_ptr<Op> make_identity(const Node& node) {
  return std::make_unique<IdentityOp>(node);
}
std::unique_ptr<Op> make_concat(const Node& node) {
  return std::make_unique<ConcatOp>(node);
}
std::unique_ptr<Op> make_transpose(const Node& node) {
  return std::make_unique<TransposeOp>(node);
}

}  // namespace minfer
