#include "graph/constant_folding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "graph/errors.h"
#include "ops/broadcast.h"
#include "ops/op.h"

namespace minfer {
namespace {

using Inputs = std::vector<FoldInput>;

const TypedTensor& value(const Inputs& in, size_t i, const char* what) {
  if (i >= in.size() || !in[i].present) throw OpError(fmt::format("missing input {} ({})", i, what));
  return *in[i].value;
}

bool has(const Inputs& in, size_t i) {
  return i < in.size() && in[i].present;
}

std::vector<int64_t> ints_of(const TypedTensor& t, const char* what) {
  if (!t.is_integer()) throw OpError(fmt::format("{} must be integers, got {}", what, data_type_name(t.type)));
  return t.ints;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what = "axis") {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw OpError(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return a;
}

Shape strides_of(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// The elements of a tensor folding is about to build, checked against the memory
// limit before anything is allocated: its values and the index that gathers them, 8
// bytes each (TypedTensor holds int64 or double).
int64_t checked_size(const Shape& shape, const MemoryBudget& budget) {
  const int64_t n = num_elements(shape);
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, int64_t{16}, &bytes)) bytes = INT64_MAX;
  budget.check(bytes, fmt::format("folding a tensor of shape {}", shape_str(shape)));
  return n;
}

// out[i] = src[index[i]], keeping src's type.
TypedTensor take(const TypedTensor& src, Shape shape, const std::vector<int64_t>& index) {
  TypedTensor out;
  out.type = src.type;
  out.shape = std::move(shape);
  if (src.is_integer()) {
    out.ints.reserve(index.size());
    for (int64_t i : index) out.ints.push_back(src.ints[i]);
  } else {
    out.reals.reserve(index.size());
    for (int64_t i : index) out.reals.push_back(src.reals[i]);
  }
  return out;
}

// The source index of every element of a broadcast of `from` to `to`.
std::vector<int64_t> broadcast_index(const Shape& from, const Shape& to, const MemoryBudget& budget) {
  const BroadcastIndex b(from, to);
  const int64_t n = checked_size(to, budget);
  std::vector<int64_t> index(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) index[i] = b.source(i);
  return index;
}

TypedTensor constant(const FoldNode& node) {
  const Attributes& a = node.attrs;
  int forms = static_cast<int>(node.tensor_attrs.count("value"));
  for (const char* name : {"value_float", "value_floats", "value_int", "value_ints"}) forms += a.has(name) ? 1 : 0;
  for (const char* name : {"value_string", "value_strings", "sparse_value"})
    if (a.has(name) || node.tensor_attrs.count(name))
      throw UnsupportedError(fmt::format("attribute '{}' is not supported", name));
  if (forms != 1) throw OpError("needs exactly one of the attributes value, value_float(s), value_int(s)");
  if (auto it = node.tensor_attrs.find("value"); it != node.tensor_attrs.end()) return it->second;
  if (a.has("value_float")) return real_tensor({}, {a.get_float("value_float", 0)});
  if (a.has("value_floats")) {
    std::vector<double> v = a.get_floats("value_floats");
    const int64_t n = static_cast<int64_t>(v.size());
    return real_tensor({n}, std::move(v));
  }
  if (a.has("value_int")) return int_tensor({}, {a.get_int("value_int", 0)});
  std::vector<int64_t> v = a.get_ints("value_ints");
  const int64_t n = static_cast<int64_t>(v.size());
  return int_tensor({n}, std::move(v));
}

TypedTensor constant_of_shape(const FoldNode& node, const Inputs& in, const MemoryBudget& budget) {
  Shape shape = ints_of(value(in, 0, "shape"), "shape");
  for (int64_t d : shape)
    if (d < 0) throw OpError(fmt::format("shape {} has a negative dimension", shape_str(shape)));
  TypedTensor fill = real_tensor({}, {0.0});
  if (auto it = node.tensor_attrs.find("value"); it != node.tensor_attrs.end()) fill = it->second;
  if (fill.size() != 1) throw OpError("attribute 'value' must hold one element");
  return take(fill, shape, std::vector<int64_t>(static_cast<size_t>(checked_size(shape, budget)), 0));
}

TypedTensor shape_of(const FoldNode& node, const Inputs& in) {
  if (in.empty() || !in[0].present) throw OpError("missing input 0 (data)");
  const Shape& s = in[0].shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clamp(node.attrs.get_int("start", 0)), end = clamp(node.attrs.get_int("end", rank));
  std::vector<int64_t> dims(s.begin() + start, s.begin() + std::max(start, end));
  const auto n = static_cast<int64_t>(dims.size());
  return int_tensor({n}, std::move(dims));
}

TypedTensor cast(const FoldNode& node, const TypedTensor& x, const MemoryBudget& budget) {
  if (!node.attrs.has("to")) throw OpError("attribute 'to' is required");
  checked_size(x.shape, budget);
  const auto to = static_cast<DataType>(node.attrs.get_int("to", 0));
  TypedTensor out;
  out.type = to;
  out.shape = x.shape;
  if (is_integer_type(to)) {
    for (int64_t i = 0; i < x.size(); ++i) {
      if (to == DataType::kBool) {
        out.ints.push_back(x.real(i) != 0.0 ? 1 : 0);
      } else if (x.is_integer()) {
        out.ints.push_back(x.ints[i]);
      } else {
        const double v = std::trunc(x.reals[i]);  // C and numpy: toward zero
        if (!(std::fabs(v) < 0x1.0p63))
          throw OpError(fmt::format("cannot cast {} to {}", x.reals[i], data_type_name(to)));
        out.ints.push_back(static_cast<int64_t>(v));
      }
    }
  } else if (to == DataType::kFloat || to == DataType::kDouble) {
    for (int64_t i = 0; i < x.size(); ++i) {
      const double v = x.real(i);
      // float32 and narrower keep float32's precision here (the engine's own type).
      out.reals.push_back(to == DataType::kDouble ? v : static_cast<double>(narrow_to_float(v)));
    }
  } else {
    throw UnsupportedError(fmt::format("casting to {} is not supported", data_type_name(to)));
  }
  return out;
}

// Reshape, Flatten, Squeeze, Unsqueeze: the data is unchanged; the output shape comes
// from the engine's own op, so both paths share one reading of the attributes.
TypedTensor same_data(const FoldNode& node, const Inputs& in, const MemoryBudget& budget) {
  const TypedTensor& x = value(in, 0, "data");
  checked_size(x.shape, budget);
  Node engine_node{"", node.op_type, {}, {"out"}, node.attrs};
  std::vector<Tensor> constants;  // the float32 form of the shape/axes inputs
  constants.reserve(in.size());
  ArgInfos args;
  for (size_t i = 0; i < in.size(); ++i) {
    ArgInfo a;
    a.present = in[i].present;
    a.shape = in[i].shape;
    if (i > 0 && in[i].present) {
      constants.push_back(to_float32(value(in, i, "shape"), fmt::format("input {}", i)));
      a.constant = &constants.back();
    }
    args.push_back(std::move(a));
    engine_node.inputs.push_back(in[i].present ? fmt::format("in{}", i) : "");
  }
  const std::vector<Shape> out = create_op(engine_node)->infer_shapes(args);
  TypedTensor y = x;
  y.shape = out.at(0);
  return y;
}

TypedTensor concat(const FoldNode& node, const Inputs& in, const MemoryBudget& budget) {
  if (!node.attrs.has("axis") && node.opset >= 4) throw OpError("attribute 'axis' is required");
  if (in.empty()) throw OpError("needs at least one input");
  const TypedTensor& first = value(in, 0, "input");
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  const int64_t axis = normalize_axis(node.attrs.get_int("axis", 1), rank);
  Shape shape = first.shape;
  shape[axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const TypedTensor& t = value(in, i, "input");
    bool ok = t.shape.size() == first.shape.size() && t.is_integer() == first.is_integer();
    for (int64_t d = 0; ok && d < rank; ++d) ok = d == axis || t.shape[d] == first.shape[d];
    if (!ok)
      throw OpError(fmt::format("input {} ({} {}) does not match input 0 ({} {}) along axis {}", i,
                                data_type_name(t.type), shape_str(t.shape), data_type_name(first.type),
                                shape_str(first.shape), axis));
    if (__builtin_add_overflow(shape[axis], t.shape[axis], &shape[axis])) throw OpError("the output size overflows");
  }
  checked_size(shape, budget);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
  TypedTensor out;
  out.type = first.type;
  out.shape = shape;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < in.size(); ++i) {
      const TypedTensor& t = *in[i].value;
      const int64_t chunk = t.shape[axis] * inner;
      if (t.is_integer())
        out.ints.insert(out.ints.end(), t.ints.begin() + o * chunk, t.ints.begin() + (o + 1) * chunk);
      else
        out.reals.insert(out.reals.end(), t.reals.begin() + o * chunk, t.reals.begin() + (o + 1) * chunk);
    }
  }
  return out;
}

TypedTensor gather(const FoldNode& node, const Inputs& in, const MemoryBudget& budget) {
  const TypedTensor& data = value(in, 0, "data");
  const TypedTensor& indices = value(in, 1, "indices");
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) throw OpError("data must have rank at least 1");
  const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), rank);
  const int64_t dim = data.shape[axis];
  Shape shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.shape[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= data.shape[d];
  std::vector<int64_t> index;
  index.reserve(static_cast<size_t>(checked_size(shape, budget)));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k : ints_of(indices, "indices")) {
      if (k < -dim || k >= dim) throw OpError(fmt::format("index {} is out of range for axis of size {}", k, dim));
      if (k < 0) k += dim;
      for (int64_t i = 0; i < inner; ++i) index.push_back((o * dim + k) * inner + i);
    }
  }
  return take(data, shape, index);
}

TypedTensor slice(const FoldNode& node, const Inputs& in, const MemoryBudget& budget) {
  const TypedTensor& data = value(in, 0, "data");
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (node.opset < 10) {
    starts = node.attrs.get_ints("starts");
    ends = node.attrs.get_ints("ends");
    axes = node.attrs.get_ints("axes");
  } else {
    starts = ints_of(value(in, 1, "starts"), "starts");
    ends = ints_of(value(in, 2, "ends"), "ends");
    if (has(in, 3)) axes = ints_of(*in[3].value, "axes");
    if (has(in, 4)) steps = ints_of(*in[4].value, "steps");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw OpError("starts, ends, axes and steps must have the same length");
  Shape begin(rank, 0), step(rank, 1), shape = data.shape;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = normalize_axis(axes[i], rank);
    if (seen[a]) throw OpError(fmt::format("axis {} is repeated", axes[i]));
    seen[a] = true;
    const int64_t dim = data.shape[a], s = steps[i];
    if (s == 0) throw OpError("steps must not be 0");
    // ONNX's clamping: negative values count from the end, then clamp to the axis
    // ([0, dim] going forward, [-1, dim-1] going backward).
    int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (s > 0) {
      b = std::clamp(b, int64_t{0}, dim);
      e = std::clamp(e, int64_t{0}, dim);
      shape[a] = e > b ? (e - b - 1) / s + 1 : 0;
    } else {
      b = std::clamp(b, int64_t{0}, dim - 1);
      e = std::clamp(e, int64_t{-1}, dim - 1);
      shape[a] = b > e ? (s == INT64_MIN ? 1 : (b - e - 1) / -s + 1) : 0;
    }
    begin[a] = b;
    step[a] = s;
  }
  const Shape src_strides = strides_of(data.shape);
  const int64_t n = checked_size(shape, budget);
  std::vector<int64_t> index(static_cast<size_t>(n));
  const Shape out_strides = strides_of(shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) src += (begin[d] + (i / out_strides[d]) % shape[d] * step[d]) * src_strides[d];
    index[i] = src;
  }
  return take(data, shape, index);
}

TypedTensor transpose(const FoldNode& node, const TypedTensor& x, const MemoryBudget& budget) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> perm = node.attrs.get_ints("perm");
  if (perm.empty())
    for (int64_t i = rank; i-- > 0;) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank)
    throw OpError(fmt::format("perm has {} entries for rank {}", perm.size(), rank));
  std::vector<bool> seen(rank, false);
  Shape shape(rank);
  for (int64_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || seen[perm[i]]) throw OpError("perm is not a permutation");
    seen[perm[i]] = true;
    shape[i] = x.shape[perm[i]];
  }
  const Shape src_strides = strides_of(x.shape), out_strides = strides_of(shape);
  const int64_t n = checked_size(shape, budget);
  std::vector<int64_t> index(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) src += (i / out_strides[d]) % shape[d] * src_strides[perm[d]];
    index[i] = src;
  }
  return take(x, shape, index);
}

TypedTensor expand(const Inputs& in, const MemoryBudget& budget) {
  const TypedTensor& x = value(in, 0, "input");
  const Shape target = ints_of(value(in, 1, "shape"), "shape");
  const Shape shape = broadcast_shapes(x.shape, target);
  return take(x, shape, broadcast_index(x.shape, shape, budget));
}

TypedTensor range(const Inputs& in, const MemoryBudget& budget) {
  const TypedTensor& start = value(in, 0, "start");
  const TypedTensor& limit = value(in, 1, "limit");
  const TypedTensor& delta = value(in, 2, "delta");
  for (const TypedTensor* t : {&start, &limit, &delta}) {
    if (t->size() != 1) throw OpError("start, limit and delta must be scalars");
    if (t->is_integer() != start.is_integer()) throw OpError("start, limit and delta must have one type");
  }
  if (start.is_integer()) {
    const int64_t s = start.ints[0], l = limit.ints[0], d = delta.ints[0];
    if (d == 0) throw OpError("delta must not be 0");
    int64_t span = 0;  // |limit - start|, when the range runs toward limit
    if ((d > 0 ? __builtin_sub_overflow(l, s, &span) : __builtin_sub_overflow(s, l, &span)) || d == INT64_MIN)
      throw OpError("the range overflows int64");
    const int64_t n = checked_size({span > 0 ? (span - 1) / (d > 0 ? d : -d) + 1 : 0}, budget);
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = s + i * d;
    return int_tensor({n}, std::move(v), start.type);
  }
  const double s = start.reals[0], l = limit.reals[0], d = delta.reals[0];
  if (d == 0) throw OpError("delta must not be 0");
  const double count = std::max(0.0, std::ceil((l - s) / d));
  if (!(count < 0x1.0p62)) throw OpError(fmt::format("a range from {} to {} by {} has too many elements", s, l, d));
  const int64_t n = checked_size({static_cast<int64_t>(count)}, budget);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = s + static_cast<double>(i) * d;
  return real_tensor({n}, std::move(v), start.type);
}

// Element-wise binary ops with numpy broadcasting, on integers when both inputs are.
TypedTensor binary(const std::string& op, const TypedTensor& a, const TypedTensor& b, const MemoryBudget& budget) {
  const Shape shape = broadcast_shapes(a.shape, b.shape);
  const std::vector<int64_t> ia = broadcast_index(a.shape, shape, budget), ib = broadcast_index(b.shape, shape, budget);
  const bool compare = op == "Equal" || op == "Less" || op == "Greater";
  const bool integer = a.is_integer() && b.is_integer();
  TypedTensor out;
  out.shape = shape;
  out.type = compare ? DataType::kBool : (integer || !a.is_integer() ? a.type : b.type);
  for (size_t i = 0; i < ia.size(); ++i) {
    if (compare) {
      const double x = a.real(ia[i]), y = b.real(ib[i]);
      out.ints.push_back(op == "Equal" ? x == y : op == "Less" ? x < y : x > y);
    } else if (integer) {
      const int64_t x = a.ints[ia[i]], y = b.ints[ib[i]];
      int64_t r = 0;
      bool overflow = false;
      if (op == "Add")
        overflow = __builtin_add_overflow(x, y, &r);
      else if (op == "Sub")
        overflow = __builtin_sub_overflow(x, y, &r);
      else if (op == "Mul")
        overflow = __builtin_mul_overflow(x, y, &r);
      else if (y == 0)
        throw OpError("integer division by zero");
      else if (x == INT64_MIN && y == -1)
        overflow = true;
      else
        r = x / y;  // truncation toward zero, as C and ONNX Runtime
      if (overflow) throw OpError(fmt::format("{} of {} and {} overflows int64", op, x, y));
      out.ints.push_back(r);
    } else {
      const double x = a.real(ia[i]), y = b.real(ib[i]);
      const double r = op == "Add" ? x + y : op == "Sub" ? x - y : op == "Mul" ? x * y : x / y;
      out.reals.push_back(out.type == DataType::kDouble ? r : static_cast<double>(narrow_to_float(r)));
    }
  }
  return out;
}

TypedTensor where(const Inputs& in, const MemoryBudget& budget) {
  const TypedTensor& c = value(in, 0, "condition");
  const TypedTensor& x = value(in, 1, "X");
  const TypedTensor& y = value(in, 2, "Y");
  if (x.is_integer() != y.is_integer()) throw OpError("X and Y must have the same type");
  const Shape shape = broadcast_shapes(broadcast_shapes(c.shape, x.shape), y.shape);
  const std::vector<int64_t> ic = broadcast_index(c.shape, shape, budget), ix = broadcast_index(x.shape, shape, budget),
                             iy = broadcast_index(y.shape, shape, budget);
  TypedTensor out;
  out.type = x.type;
  out.shape = shape;
  for (size_t i = 0; i < ic.size(); ++i) {
    const bool pick_x = c.real(ic[i]) != 0.0;
    if (x.is_integer())
      out.ints.push_back(pick_x ? x.ints[ix[i]] : y.ints[iy[i]]);
    else
      out.reals.push_back(pick_x ? x.reals[ix[i]] : y.reals[iy[i]]);
  }
  return out;
}

TypedTensor neg(const TypedTensor& x, const MemoryBudget& budget) {
  checked_size(x.shape, budget);
  TypedTensor out = x;
  for (int64_t& v : out.ints) {
    if (v == INT64_MIN) throw OpError("Neg of the smallest int64 overflows");
    v = -v;
  }
  for (double& v : out.reals) v = -v;
  return out;
}

const std::vector<std::string>& foldable_ops() {
  static const std::vector<std::string> ops = {"Constant", "ConstantOfShape",
                                               "Shape",    "Size",
                                               "Identity", "Cast",
                                               "Reshape",  "Flatten",
                                               "Squeeze",  "Unsqueeze",
                                               "Concat",   "Gather",
                                               "Slice",    "Transpose",
                                               "Expand",   "Range",
                                               "Add",      "Sub",
                                               "Mul",      "Div",
                                               "Neg",      "Equal",
                                               "Less",     "Greater",
                                               "Where"};
  return ops;
}

}  // namespace

bool is_foldable_op(const std::string& op_type) {
  const auto& ops = foldable_ops();
  return std::find(ops.begin(), ops.end(), op_type) != ops.end();
}

bool can_fold(const FoldNode& node, const std::vector<FoldInput>& in) {
  if (!is_foldable_op(node.op_type)) return false;
  if (node.op_type == "Shape" || node.op_type == "Size") return true;
  return std::all_of(in.begin(), in.end(), [](const FoldInput& i) { return !i.present || i.value; });
}

std::vector<TypedTensor> fold(const FoldNode& node, const std::vector<FoldInput>& in, const MemoryBudget& budget) {
  const std::string& op = node.op_type;
  const Attributes& a = node.attrs;
  if (op == "Constant")
    a.check_known({"value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings"});
  else if (op == "Shape")
    a.check_known({"start", "end"});
  else if (op == "Cast")
    a.check_known({"to"});
  else if (op == "Concat" || op == "Gather")
    a.check_known({"axis"});
  else if (op == "Slice")
    a.check_known({"starts", "ends", "axes"});
  else if (op == "Transpose")
    a.check_known({"perm"});
  else if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") {
    // checked by the engine's op, which reads them
  } else
    a.check_known({});
  if (op == "Constant") return {constant(node)};
  if (op == "ConstantOfShape") return {constant_of_shape(node, in, budget)};
  if (op == "Shape") return {shape_of(node, in)};
  if (op == "Size") {
    if (in.empty() || !in[0].present) throw OpError("missing input 0 (data)");
    return {int_tensor({}, {num_elements(in[0].shape)})};
  }
  if (op == "Identity") {
    const TypedTensor& x = value(in, 0, "input");
    checked_size(x.shape, budget);
    return {x};
  }
  if (op == "Cast") return {cast(node, value(in, 0, "input"), budget)};
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") return {same_data(node, in, budget)};
  if (op == "Concat") return {concat(node, in, budget)};
  if (op == "Gather") return {gather(node, in, budget)};
  if (op == "Slice") return {slice(node, in, budget)};
  if (op == "Transpose") return {transpose(node, value(in, 0, "data"), budget)};
  if (op == "Expand") return {expand(in, budget)};
  if (op == "Range") return {range(in, budget)};
  if (op == "Neg") return {neg(value(in, 0, "X"), budget)};
  if (op == "Where") return {where(in, budget)};
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Equal" || op == "Less" || op == "Greater")
    return {binary(op, value(in, 0, "A"), value(in, 1, "B"), budget)};
  throw UnsupportedError(fmt::format("op type '{}' cannot be folded", op));
}

}  // namespace minfer
