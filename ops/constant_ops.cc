// Ops whose outputs come from attributes and shapes, not from input data: Constant,
// ConstantOfShape, Shape, Size and Range. The compiler folds them whenever their inputs
// are known (Shape and Size need only their input's type), so in a model with static
// shapes they never run in a session; they have kernels all the same, which is what
// folding runs. 0 FLOPs.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "ops/op_helpers.h"

namespace minfer {
namespace {

// A kernel that writes one tensor computed at bind time.
std::unique_ptr<Kernel> constant_kernel(Tensor value) {
  return make_kernel({}, [value = std::move(value)](const RunContext&, std::span<const TensorView>,
                                                    std::span<const TensorView> out, Workspace) {
    if (value.bytes() > 0) std::memcpy(out[0].data, value.data(), static_cast<size_t>(value.bytes()));
  });
}

class ConstantOp final : public Op {
 public:
  explicit ConstantOp(const Node& node) {
    const Attributes& a = node.attrs;
    a.check_known({"value", "value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings",
                   "sparse_value"});
    for (const char* name : {"value_string", "value_strings", "sparse_value"})
      if (a.has(name)) throw UnsupportedError(fmt::format("attribute '{}' is not supported", name));
    int forms = 0;
    for (const char* name : {"value", "value_float", "value_floats", "value_int", "value_ints"}) forms += a.has(name);
    if (forms != 1) throw OpError("needs exactly one of the attributes value, value_float(s), value_int(s)");
    if (const Tensor* t = a.get_tensor("value"))
      value_ = *t;
    else if (a.has("value_float"))
      value_ = Tensor(Shape{}, std::vector<float>{static_cast<float>(a.get_data_float("value_float", 0))});
    else if (a.has("value_int"))
      value_ = Tensor(Shape{}, std::vector<int64_t>{a.get_int("value_int", 0)});
    else if (a.has("value_ints")) {
      std::vector<int64_t> v = a.get_ints("value_ints");
      const int64_t n = static_cast<int64_t>(v.size());
      value_ = Tensor({n}, std::move(v));
    } else {
      const std::vector<double> v = a.get_floats("value_floats");
      value_ = Tensor({static_cast<int64_t>(v.size())}, std::vector<float>(v.begin(), v.end()));
    }
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 0, 0);
    return {value_.type()};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature&, const BindContext&) const override {
    return constant_kernel(value_);
  }

 private:
  Tensor value_;
};

class ConstantOfShapeOp final : public Op {
 public:
  explicit ConstantOfShapeOp(const Node& node) {
    node.attrs.check_known({"value"});
    if (const Tensor* t = node.attrs.get_tensor("value")) {
      if (t->size() != 1) throw OpError("attribute 'value' must hold one element");
      fill_ = t->reshaped({});
    }
  }
  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = 1;  // the shape
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    Shape shape = constant_ints(in, 0, "shape");
    for (int64_t d : shape)
      if (d < 0) throw OpError(fmt::format("shape {} has a negative dimension", shape_str(shape)));
    return {{fill_.dtype(), shape}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    return make_kernel(
        {}, [fill = fill_, n = num_elements(sig.outputs[0].shape())](const RunContext&, std::span<const TensorView>,
                                                                     std::span<const TensorView> out, Workspace) {
          const int64_t bytes = fill.bytes();
          for (int64_t i = 0; i < n; ++i)
            std::memcpy(static_cast<std::byte*>(out[0].data) + i * bytes, fill.data(), bytes);
        });
  }

 private:
  Tensor fill_ = Tensor(Shape{}, std::vector<float>{0.0f});
};

class ShapeOp final : public Op {
 public:
  explicit ShapeOp(const Node& node) {
    node.attrs.check_known({"start", "end"});
    start_ = node.attrs.get_int("start", 0);
    end_ = node.attrs.get_int("end", INT64_MAX);
  }
  OpTraits traits() const override {
    OpTraits t;
    t.shape_only_inputs = 1;
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    return {{DType::kInt64, {static_cast<int64_t>(dims(in[0].shape()).size())}}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const std::vector<int64_t> d = dims(sig.inputs[0].shape());
    return constant_kernel(Tensor({static_cast<int64_t>(d.size())}, d));
  }

 private:
  std::vector<int64_t> dims(const Shape& s) const {
    const int64_t rank = static_cast<int64_t>(s.size());
    auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
    const int64_t start = clamp(start_), end = clamp(end_);
    return {s.begin() + start, s.begin() + std::max(start, end)};
  }
  int64_t start_, end_;
};

class SizeOp final : public Op {
 public:
  explicit SizeOp(const Node& node) { node.attrs.check_known({}); }
  OpTraits traits() const override {
    OpTraits t;
    t.shape_only_inputs = 1;
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    return {{DType::kInt64, {}}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    return constant_kernel(Tensor(Shape{}, std::vector<int64_t>{num_elements(sig.inputs[0].shape())}));
  }
};

// Range(start, limit, delta): scalars of one type; float32 or int64.
class RangeOp final : public Op {
 public:
  // opset 27's stash_type only changes float16 and bfloat16 ranges, which are refused.
  explicit RangeOp(const Node& node) { node.attrs.check_known({"stash_type"}); }
  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = 0b111;  // start, limit, delta
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 3, 3);
    for (const OpInput& i : in) {
      if (num_elements(i.shape()) != 1) throw OpError("start, limit and delta must be scalars");
      if (i.dtype() != in[0].dtype() || i.dtype() == DType::kBool)
        throw OpError("start, limit and delta must be numbers of one type");
      if (!i.constant) throw UnsupportedError("start, limit and delta must be known before running");
    }
    return {{in[0].dtype(), {count(in)}}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const int64_t n = count(sig.inputs);
    if (sig.inputs[0].dtype() == DType::kInt64) {
      const int64_t s = sig.inputs[0].constant->values<int64_t>()[0], d = sig.inputs[2].constant->values<int64_t>()[0];
      std::vector<int64_t> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) v[i] = s + i * d;
      return constant_kernel(Tensor({n}, std::move(v)));
    }
    const float s = sig.inputs[0].constant->values<float>()[0], d = sig.inputs[2].constant->values<float>()[0];
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = s + static_cast<float>(i) * d;
    return constant_kernel(Tensor({n}, std::move(v)));
  }

 private:
  // max(ceil((limit - start) / delta), 0), refused when it does not fit.
  static int64_t count(std::span<const OpInput> in) {
    if (in[0].dtype() == DType::kInt64) {
      const int64_t s = in[0].constant->values<int64_t>()[0], l = in[1].constant->values<int64_t>()[0],
                    d = in[2].constant->values<int64_t>()[0];
      if (d == 0) throw OpError("delta must not be 0");
      int64_t span = 0;  // |limit - start|, when the range runs toward limit
      if ((d > 0 ? __builtin_sub_overflow(l, s, &span) : __builtin_sub_overflow(s, l, &span)) || d == INT64_MIN)
        throw OpError("the range overflows int64");
      return span > 0 ? (span - 1) / (d > 0 ? d : -d) + 1 : 0;
    }
    const double s = in[0].constant->values<float>()[0], l = in[1].constant->values<float>()[0],
                 d = in[2].constant->values<float>()[0];
    if (d == 0) throw OpError("delta must not be 0");
    const double n = std::max(0.0, std::ceil((l - s) / d));
    if (!(n < 0x1.0p62)) throw OpError(fmt::format("a range from {} to {} by {} has too many elements", s, l, d));
    return static_cast<int64_t>(n);
  }
};

}  // namespace

std::unique_ptr<Op> make_constant(const Node& node) {
  return std::make_unique<ConstantOp>(node);
}
std::unique_ptr<Op> make_constant_of_shape(const Node& node) {
  return std::make_unique<ConstantOfShapeOp>(node);
}
std::unique_ptr<Op> make_shape(const Node& node) {
  return std::make_unique<ShapeOp>(node);
}
std::unique_ptr<Op> make_size(const Node& node) {
  return std::make_unique<SizeOp>(node);
}
std::unique_ptr<Op> make_range(const Node& node) {
  return std::make_unique<RangeOp>(node);
}

}  // namespace minfer
