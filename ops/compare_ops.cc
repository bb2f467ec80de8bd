// Comparisons with broadcasting (Equal, Less, Greater, LessOrEqual, GreaterOrEqual on
// float32, int64 or bool; bool outputs), the logical ops on bool tensors (And, Or, Xor
// with broadcasting, Not), the float32 tests IsNaN and IsInf, and Where, which picks X
// or Y by a bool condition. 1 FLOP per output element for each, 0 for Where.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "ops/broadcast.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

enum class Compare { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual, kAnd, kOr, kXor };

constexpr bool is_logical(Compare c) {
  return c == Compare::kAnd || c == Compare::kOr || c == Compare::kXor;
}

template <Compare c, typename T>
void compare_all(const BroadcastIndex& ia, const BroadcastIndex& ib, std::span<const TensorView> in,
                 const TensorView& out) {
  const T* a = in[0].as<T>();
  const T* b = in[1].as<T>();
  uint8_t* y = out.as<uint8_t>();
  for (int64_t i = 0, n = out.size(); i < n; ++i) {
    const T x = a[ia.source(i)], z = b[ib.source(i)];
    if constexpr (c == Compare::kEqual) y[i] = x == z;
    if constexpr (c == Compare::kLess) y[i] = x < z;
    if constexpr (c == Compare::kGreater) y[i] = x > z;
    if constexpr (c == Compare::kLessOrEqual) y[i] = x <= z;
    if constexpr (c == Compare::kGreaterOrEqual) y[i] = x >= z;
    // bool tensors hold 0 or 1 (every producer writes those), so bitwise is logical.
    if constexpr (c == Compare::kAnd) y[i] = x & z;
    if constexpr (c == Compare::kOr) y[i] = x | z;
    if constexpr (c == Compare::kXor) y[i] = x ^ z;
  }
}

template <Compare c>
void compare_typed(DType dtype, const BroadcastIndex& ia, const BroadcastIndex& ib, std::span<const TensorView> in,
                   const TensorView& out) {
  if constexpr (is_logical(c)) {
    return compare_all<c, uint8_t>(ia, ib, in, out);
  } else {
    switch (dtype) {
      case DType::kFloat32: return compare_all<c, float>(ia, ib, in, out);
      case DType::kInt64: return compare_all<c, int64_t>(ia, ib, in, out);
      case DType::kBool: return compare_all<c, uint8_t>(ia, ib, in, out);
    }
  }
}

using CompareFn = void (*)(DType, const BroadcastIndex&, const BroadcastIndex&, std::span<const TensorView>,
                           const TensorView&);

CompareFn compare_fn(Compare c) {
  switch (c) {
    case Compare::kEqual: return compare_typed<Compare::kEqual>;
    case Compare::kLess: return compare_typed<Compare::kLess>;
    case Compare::kGreater: return compare_typed<Compare::kGreater>;
    case Compare::kLessOrEqual: return compare_typed<Compare::kLessOrEqual>;
    case Compare::kGreaterOrEqual: return compare_typed<Compare::kGreaterOrEqual>;
    case Compare::kAnd: return compare_typed<Compare::kAnd>;
    case Compare::kOr: return compare_typed<Compare::kOr>;
    case Compare::kXor: return compare_typed<Compare::kXor>;
  }
  return nullptr;
}

class CompareOp final : public Op {
 public:
  CompareOp(const Node& node, Compare c) : compare_(c) { node.attrs.check_known({}); }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 2, 2);
    if (in[0].dtype() != in[1].dtype())
      throw OpError(fmt::format("inputs are {} and {}; they must have one type", dtype_name(in[0].dtype()),
                                dtype_name(in[1].dtype())));
    if (is_logical(compare_) && in[0].dtype() != DType::kBool)
      throw OpError(fmt::format("inputs must be bool, got {}", dtype_name(in[0].dtype())));
    return {{DType::kBool, broadcast_shapes(in[0].shape(), in[1].shape())}};
  }
  OpCost cost(const OpSignature& sig) const override {
    return op_cost(*this, sig, 0,
                   CostExpr::of("FLOPs/element", 1) * CostExpr::of("elements", num_elements(sig.outputs[0].shape())));
  }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& y = sig.outputs[0].shape();
    return make_kernel(
        {}, [fn = compare_fn(compare_), dtype = sig.inputs[0].dtype(), ia = BroadcastIndex(sig.inputs[0].shape(), y),
             ib = BroadcastIndex(sig.inputs[1].shape(), y)](const RunContext&, std::span<const TensorView> in,
                                                            std::span<const TensorView> out,
                                                            Workspace) { fn(dtype, ia, ib, in, out[0]); });
  }

 private:
  Compare compare_;
};

// Not on bool, IsNaN and IsInf on float32: one bool per input element.
enum class Test { kNot, kIsNaN, kIsInf };

class TestOp final : public Op {
 public:
  TestOp(const Node& node, Test t) : test_(t) {
    if (t != Test::kIsInf) {
      node.attrs.check_known({});
      return;
    }
    node.attrs.check_known({"detect_negative", "detect_positive"});
    negative_ = node.attrs.get_int("detect_negative", 1) != 0;
    positive_ = node.attrs.get_int("detect_positive", 1) != 0;
  }
  OpTraits traits() const override {
    OpTraits t;
    t.elementwise = true;
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    const DType want = test_ == Test::kNot ? DType::kBool : DType::kFloat32;
    if (in[0].dtype() != want)
      throw OpError(fmt::format("input must be {}, got {}", dtype_name(want), dtype_name(in[0].dtype())));
    return {{DType::kBool, in[0].shape()}};
  }
  OpCost cost(const OpSignature& sig) const override {
    return op_cost(*this, sig, 0,
                   CostExpr::of("FLOPs/element", 1) * CostExpr::of("elements", num_elements(sig.outputs[0].shape())));
  }
  std::unique_ptr<Kernel> bind(const OpSignature&, const BindContext&) const override {
    return make_kernel(
        {}, [t = test_, negative = negative_, positive = positive_](const RunContext&, std::span<const TensorView> in,
                                                                    std::span<const TensorView> out, Workspace) {
          uint8_t* y = out[0].as<uint8_t>();
          const int64_t n = out[0].size();
          if (t == Test::kNot) {
            const uint8_t* x = in[0].as<uint8_t>();
            for (int64_t i = 0; i < n; ++i) y[i] = x[i] ^ 1;
            return;
          }
          const float* x = in[0].f32();
          for (int64_t i = 0; i < n; ++i)
            y[i] = t == Test::kIsNaN ? std::isnan(x[i]) : std::isinf(x[i]) && (x[i] > 0 ? positive : negative);
        });
  }

 private:
  Test test_;
  bool negative_ = true, positive_ = true;
};

class WhereOp final : public Op {
 public:
  explicit WhereOp(const Node& node) { node.attrs.check_known({}); }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 3, 3);
    if (in[0].dtype() != DType::kBool)
      throw OpError(fmt::format("condition must be bool, got {}", dtype_name(in[0].dtype())));
    if (in[1].dtype() != in[2].dtype())
      throw OpError(fmt::format("X and Y are {} and {}; they must have one type", dtype_name(in[1].dtype()),
                                dtype_name(in[2].dtype())));
    return {{in[1].dtype(), broadcast_shapes(broadcast_shapes(in[0].shape(), in[1].shape()), in[2].shape())}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& y = sig.outputs[0].shape();
    return make_kernel(
        {}, [ic = BroadcastIndex(sig.inputs[0].shape(), y), ix = BroadcastIndex(sig.inputs[1].shape(), y),
             iy = BroadcastIndex(sig.inputs[2].shape(), y), bytes = dtype_size(sig.outputs[0].type.dtype)](
                const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          const uint8_t* c = in[0].as<uint8_t>();
          const auto* x = static_cast<const std::byte*>(in[1].data);
          const auto* z = static_cast<const std::byte*>(in[2].data);
          auto* dst = static_cast<std::byte*>(out[0].data);
          for (int64_t i = 0, n = out[0].size(); i < n; ++i) {
            const std::byte* src = c[ic.source(i)] ? x + ix.source(i) * bytes : z + iy.source(i) * bytes;
            std::memcpy(dst + i * bytes, src, static_cast<size_t>(bytes));
          }
        });
  }
};

}  // namespace

std::unique_ptr<Op> make_compare_equal(const Node& node) {
  return std::make_unique<CompareOp>(node, Compare::kEqual);
}
std::unique_ptr<Op> make_compare_less(const Node& node) {
  return std::make_unique<CompareOp>(node, Compare::kLess);
}
std::unique_ptr<Op> make_compare_greater(const Node& node) {
  return std::make_unique<CompareOp>(node, Compare::kGreater);
}
std::unique_ptr<Op> make_compare_less_or_equal(const Node& node) {
  return std::make_unique<CompareOp>(node, Compare::kLessOrEqual);
}
std::unique_ptr<Op> make_compare_greater_or_equal(const Node& node) {
  return std::make_unique<CompareOp>(node, Compare::kGreaterOrEqual);
}
std::unique_ptr<Op> make_and(const Node& node) {
  return std::make_unique<CompareOp>(node, Compare::kAnd);
}
std::unique_ptr<Op> make_or(const Node& node) {
  return std::make_unique<CompareOp>(node, Compare::kOr);
}
std::unique_ptr<Op> make_xor(const Node& node) {
  return std::make_unique<CompareOp>(node, Compare::kXor);
}
std::unique_ptr<Op> make_not(const Node& node) {
  return std::make_unique<TestOp>(node, Test::kNot);
}
std::unique_ptr<Op> make_is_nan(const Node& node) {
  return std::make_unique<TestOp>(node, Test::kIsNaN);
}
std::unique_ptr<Op> make_is_inf(const Node& node) {
  return std::make_unique<TestOp>(node, Test::kIsInf);
}
std::unique_ptr<Op> make_where(const Node& node) {
  return std::make_unique<WhereOp>(node);
}

}  // namespace minfer
