// Ops that address elements by index tuples or per-element indices read at run time:
// ScatterND and ScatterElements (and its deprecated alias Scatter) write updates into a
// copy of data, GatherND reads the slices ScatterND would write. Any element type;
// indices int64 (the loader widens int32), negative ones counting from the end. Every
// index is checked before anything is written: one out of range is an OpError naming it
// and its bound. 0 FLOPs, but 1 per update element with a reduction (add, mul, max, min);
// their traffic is every input (indices too, read at run time) and the output.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "ops/op_helpers.h"
#include "ops/strided_copy.h"

namespace minfer {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction parse_reduction(const Node& node) {
  const std::string r = node.attrs.get_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  throw OpError(fmt::format("reduction '{}' is not one of none, add, mul, max, min", r));
}

// The element an update leaves: the update itself, or the old value combined with it.
// int64 wraps around instead of overflowing; bool adds as or and multiplies as and
// (numpy's bool arithmetic); a NaN wins max and min, as in numpy.
template <typename T, Reduction R>
T combine(T old, T update) {
  if constexpr (R == Reduction::kNone) {
    return update;
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return R == Reduction::kAdd || R == Reduction::kMax ? old | update : old & update;
  } else if constexpr (R == Reduction::kAdd) {
    if constexpr (std::is_same_v<T, int64_t>)
      return static_cast<int64_t>(static_cast<uint64_t>(old) + static_cast<uint64_t>(update));
    else
      return old + update;
  } else if constexpr (R == Reduction::kMul) {
    if constexpr (std::is_same_v<T, int64_t>)
      return static_cast<int64_t>(static_cast<uint64_t>(old) * static_cast<uint64_t>(update));
    else
      return old * update;
  } else if constexpr (std::is_same_v<T, float>) {
    return R == Reduction::kMax ? nan_max(old, update) : nan_min(old, update);
  } else {
    return R == Reduction::kMax ? std::max(old, update) : std::min(old, update);
  }
}

// Calls f.template operator()<T, R>() with the element type of `dtype` and reduction `r`.
template <typename F>
void with_element_and_reduction(DType dtype, Reduction r, const F& f) {
  const auto by_reduction = [&]<typename T>() {
    switch (r) {
      case Reduction::kNone: return f.template operator()<T, Reduction::kNone>();
      case Reduction::kAdd: return f.template operator()<T, Reduction::kAdd>();
      case Reduction::kMul: return f.template operator()<T, Reduction::kMul>();
      case Reduction::kMax: return f.template operator()<T, Reduction::kMax>();
      case Reduction::kMin: return f.template operator()<T, Reduction::kMin>();
    }
  };
  switch (dtype) {
    case DType::kFloat32: return by_reduction.template operator()<float>();
    case DType::kInt64: return by_reduction.template operator()<int64_t>();
    case DType::kBool: return by_reduction.template operator()<uint8_t>();
  }
}

// `index` counted from the start of data's axis `axis` of size `dim`; throws OpError
// unless -dim <= index < dim.
int64_t resolved_index(int64_t index, int64_t axis, int64_t dim) {
  if (index < -dim || index >= dim)
    throw OpError(fmt::format("index {} is out of range for axis {} of size {} (valid: {} to {})", index, axis, dim,
                              -dim, dim - 1));
  return index < 0 ? index + dim : index;
}

void require_int64_indices(std::span<const OpInput> in) {
  if (in[1].dtype() != DType::kInt64)
    throw OpError(fmt::format("indices must be integers, got {}", dtype_name(in[1].dtype())));
}

void require_updates_like_data(std::span<const OpInput> in) {
  if (in[2].dtype() != in[0].dtype())
    throw OpError(fmt::format("updates are {}, data {}; they must have one type", dtype_name(in[2].dtype()),
                              dtype_name(in[0].dtype())));
}

// Copies data to the output unless the planner put the output over it.
void copy_data(const TensorView& data, const TensorView& out) {
  if (out.data != data.data)
    std::memcpy(out.data, data.data, static_cast<size_t>(out.size() * dtype_size(out.type.dtype)));
}

// The flops of a scatter: one per update element with a reduction.
OpCost scatter_cost(const Op& op, const OpSignature& sig, Reduction r) {
  if (r == Reduction::kNone) return op_cost(op, sig, 0, 0);
  return op_cost(
      op, sig, 0,
      CostExpr::of("FLOPs/update", 1) * CostExpr::of("update elements", num_elements(sig.inputs[2].shape())));
}

// Index tuples: the last axis of indices holds k coordinates of data's axes
// [first_axis, first_axis + k), each naming a slice of `inner` elements.
struct IndexTuples {
  int64_t k = 0, first_axis = 0;
  Shape dims, strides;  // data's sizes and element strides of those k axes

  IndexTuples(const Shape& data, int64_t k_, int64_t first) : k(k_), first_axis(first) {
    const Shape all = dense_strides(data);
    dims.assign(data.begin() + first, data.begin() + first + k);
    strides.assign(all.begin() + first, all.begin() + first + k);
  }
  // The element offset of tuple `t` (its k coordinates), checked.
  int64_t offset(const int64_t* t) const {
    int64_t at = 0;
    for (int64_t j = 0; j < k; ++j) at += resolved_index(t[j], first_axis + j, dims[j]) * strides[j];
    return at;
  }
};

// updates[m, ...] written into or combined with output[indices[m]] (a slice of data's
// trailing axes).
class ScatterNDOp final : public Op {
 public:
  explicit ScatterNDOp(const Node& node) : reduction_(Reduction::kNone) {
    node.attrs.check_known({"reduction"});
    reduction_ = parse_reduction(node);
  }
  OpTraits traits() const override {
    OpTraits t;
    t.inplace_input = 0;  // the kernel writes only over data's own elements
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 3, 3);
    require_int64_indices(in);
    require_updates_like_data(in);
    const Shape &data = in[0].shape(), &indices = in[1].shape(), &updates = in[2].shape();
    if (data.empty()) throw OpError("data must have rank at least 1");
    if (indices.empty()) throw OpError("indices must have rank at least 1");
    const int64_t k = indices.back();
    if (k < 1 || k > static_cast<int64_t>(data.size()))
      throw OpError(fmt::format("indices {} hold tuples of {} coordinates; data {} has rank {}", shape_str(indices), k,
                                shape_str(data), data.size()));
    Shape want(indices.begin(), indices.end() - 1);
    want.insert(want.end(), data.begin() + k, data.end());
    if (updates != want)
      throw OpError(fmt::format("updates {} must have shape {} (indices {} into data {})", shape_str(updates),
                                shape_str(want), shape_str(indices), shape_str(data)));
    return {in[0].type};
  }
  OpCost cost(const OpSignature& sig) const override { return scatter_cost(*this, sig, reduction_); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& data = sig.inputs[0].shape();
    const int64_t k = sig.inputs[1].shape().back();
    const int64_t inner = num_elements(Shape(data.begin() + k, data.end()));
    return make_kernel({}, [tuples = IndexTuples(data, k, 0), count = num_elements(sig.inputs[1].shape()) / k, inner,
                            reduction = reduction_](const RunContext&, std::span<const TensorView> in,
                                                    std::span<const TensorView> out, Workspace) {
      const int64_t* indices = in[1].as<int64_t>();
      for (int64_t m = 0; m < count; ++m) tuples.offset(indices + m * tuples.k);  // all checked before writing
      copy_data(in[0], out[0]);
      with_element_and_reduction(out[0].type.dtype, reduction, [&]<typename T, Reduction R>() {
        T* y = out[0].as<T>();
        const T* updates = in[2].as<T>();
        for (int64_t m = 0; m < count; ++m) {
          T* slice = y + tuples.offset(indices + m * tuples.k);
          const T* from = updates + m * inner;
          for (int64_t i = 0; i < inner; ++i) slice[i] = combine<T, R>(slice[i], from[i]);
        }
      });
    });
  }

 private:
  Reduction reduction_;
};

// output[i_0, ..., indices[i_0, ..., i_r], ..., i_r] (index at `axis`) written or
// combined with updates[i_0, ..., i_r]; indices and updates of one shape, of data's rank.
// Scatter (opset 9 and 10) is the form without reduction.
class ScatterElementsOp final : public Op {
 public:
  explicit ScatterElementsOp(const Node& node) : reduction_(Reduction::kNone) {
    if (node.op_type == "Scatter") {
      node.attrs.check_known({"axis"});
    } else {
      node.attrs.check_known({"axis", "reduction"});
      reduction_ = parse_reduction(node);
    }
    axis_ = node.attrs.get_int("axis", 0);
  }
  OpTraits traits() const override {
    OpTraits t;
    t.inplace_input = 0;  // the kernel writes only over data's own elements
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const int64_t axis = checked_axis(in);
    const Shape &data = in[0].shape(), &indices = in[1].shape(), &updates = in[2].shape();
    if (indices.size() != data.size())
      throw OpError(fmt::format("indices {} must have the rank of data {}", shape_str(indices), shape_str(data)));
    if (updates != indices)
      throw OpError(
          fmt::format("updates {} must have the shape of indices {}", shape_str(updates), shape_str(indices)));
    for (size_t d = 0; d < data.size(); ++d)
      if (static_cast<int64_t>(d) != axis && indices[d] > data[d])
        throw OpError(fmt::format("indices {} exceed data {} along axis {}", shape_str(indices), shape_str(data), d));
    return {in[0].type};
  }
  OpCost cost(const OpSignature& sig) const override { return scatter_cost(*this, sig, reduction_); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const int64_t axis = checked_axis(sig.inputs);
    const Shape& indices = sig.inputs[1].shape();
    return make_kernel({}, [axis, dims = indices, index_strides = dense_strides(indices),
                            data_strides = dense_strides(sig.inputs[0].shape()), dim = sig.inputs[0].shape()[axis],
                            reduction = reduction_](const RunContext&, std::span<const TensorView> in,
                                                    std::span<const TensorView> out, Workspace) {
      const int64_t* index = in[1].as<int64_t>();
      const int64_t n = in[1].size();
      for (int64_t i = 0; i < n; ++i) resolved_index(index[i], axis, dim);  // all checked before writing
      // Element i of indices and updates lands at its own coordinates but along `axis`.
      const auto target = [&](int64_t i) {
        int64_t at = 0;
        for (size_t d = 0; d < dims.size(); ++d) {
          const int64_t c =
              static_cast<int64_t>(d) == axis ? resolved_index(index[i], axis, dim) : i / index_strides[d] % dims[d];
          at += c * data_strides[d];
        }
        return at;
      };
      copy_data(in[0], out[0]);
      with_element_and_reduction(out[0].type.dtype, reduction, [&]<typename T, Reduction R>() {
        T* y = out[0].as<T>();
        const T* updates = in[2].as<T>();
        for (int64_t i = 0; i < n; ++i) {
          T& at = y[target(i)];
          at = combine<T, R>(at, updates[i]);
        }
      });
    });
  }

 private:
  int64_t checked_axis(std::span<const OpInput> in) const {
    check_input_count(in, 3, 3);
    require_int64_indices(in);
    require_updates_like_data(in);
    if (in[0].shape().empty()) throw OpError("data must have rank at least 1");
    return normalize_axis(axis_, static_cast<int64_t>(in[0].shape().size()));
  }

  int64_t axis_;
  Reduction reduction_;
};

// output[b..., m...] = data[b..., indices[b..., m..., :], ...]: the first batch_dims axes
// of data and indices match, and each tuple of the last axis of indices picks a slice of
// data's axes after them.
class GatherNDOp final : public Op {
 public:
  explicit GatherNDOp(const Node& node) {
    node.attrs.check_known({"batch_dims"});
    batch_dims_ = node.attrs.get_int("batch_dims", 0);
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 2, 2);
    require_int64_indices(in);
    const Shape &data = in[0].shape(), &indices = in[1].shape();
    const auto r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(indices.size());
    const int64_t b = batch_dims_;
    if (r < 1 || q < 1) throw OpError("data and indices must have rank at least 1");
    if (b < 0 || b >= std::min(r, q))
      throw OpError(fmt::format("batch_dims {} must be in [0, {}) for data {} and indices {}", b, std::min(r, q),
                                shape_str(data), shape_str(indices)));
    if (!std::equal(data.begin(), data.begin() + b, indices.begin()))
      throw OpError(
          fmt::format("the first {} axes of data {} and indices {} differ", b, shape_str(data), shape_str(indices)));
    const int64_t k = indices.back();
    if (k < 1 || k > r - b)
      throw OpError(fmt::format("indices {} hold tuples of {} coordinates; data {} has {} axes after batch_dims {}",
                                shape_str(indices), k, shape_str(data), r - b, b));
    Shape y(indices.begin(), indices.end() - 1);
    y.insert(y.end(), data.begin() + b + k, data.end());
    return {{in[0].dtype(), y}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape &data = sig.inputs[0].shape(), &indices = sig.inputs[1].shape();
    const int64_t b = batch_dims_, k = indices.back();
    const int64_t batches = num_elements(Shape(data.begin(), data.begin() + b));
    const int64_t per_batch = num_elements(indices) / k / batches;  // tuples per batch
    const int64_t batch_stride = num_elements(Shape(data.begin() + b, data.end()));
    const int64_t slice = num_elements(Shape(data.begin() + b + k, data.end())) * dtype_size(sig.inputs[0].dtype());
    return make_kernel(
        {}, [tuples = IndexTuples(data, k, b), batches, per_batch, batch_stride, slice](
                const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          const int64_t bytes = dtype_size(out[0].type.dtype);
          const auto* src = static_cast<const std::byte*>(in[0].data);
          auto* dst = static_cast<std::byte*>(out[0].data);
          const int64_t* t = in[1].as<int64_t>();
          for (int64_t batch = 0; batch < batches; ++batch)
            for (int64_t m = 0; m < per_batch; ++m, t += tuples.k, dst += slice) {
              const int64_t at = batch * batch_stride + tuples.offset(t);  // checked before it is read
              std::memcpy(dst, src + at * bytes, static_cast<size_t>(slice));
            }
        });
  }

 private:
  int64_t batch_dims_;
};

}  // namespace

std::unique_ptr<Op> make_scatter_nd(const Node& node) {
  return std::make_unique<ScatterNDOp>(node);
}
std::unique_ptr<Op> make_scatter_elements(const Node& node) {
  return std::make_unique<ScatterElementsOp>(node);
}
std::unique_ptr<Op> make_gather_nd(const Node& node) {
  return std::make_unique<GatherNDOp>(node);
}

}  // namespace minfer
