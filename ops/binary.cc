// Element-wise binary ops with ONNX broadcasting: Add, Sub, Mul, Div on float32 or
// int64 (1 FLOP per output element; int64 arithmetic is checked and integer division
// truncates, as C and ONNX Runtime), PRelu (2: compare and multiply), variadic Sum.
#include <fmt/format.h>

#include "ops/broadcast.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

enum class Arith { kAdd, kSub, kMul, kDiv, kPRelu };

template <typename T>
T apply(Arith op, T a, T b) {
  if constexpr (std::is_same_v<T, int64_t>) {
    T r = 0;
    bool overflow = false;
    switch (op) {
      case Arith::kAdd: overflow = __builtin_add_overflow(a, b, &r); break;
      case Arith::kSub: overflow = __builtin_sub_overflow(a, b, &r); break;
      case Arith::kMul: overflow = __builtin_mul_overflow(a, b, &r); break;
      default:
        if (b == 0) throw OpError("integer division by zero");
        overflow = a == INT64_MIN && b == -1;
        if (!overflow) r = a / b;
        break;
    }
    if (overflow) throw OpError(fmt::format("int64 arithmetic on {} and {} overflows", a, b));
    return r;
  } else {
    switch (op) {
      case Arith::kAdd: return a + b;
      case Arith::kSub: return a - b;
      case Arith::kMul: return a * b;
      case Arith::kDiv: return a / b;
      case Arith::kPRelu: return a < 0.0f ? b * a : a;
    }
    return a;
  }
}

// y = fn(a, b) over the broadcast shape, row by row (broadcast_row): each input is read
// with a stride of 0 or 1 along a row, so the common cases run as plain loops.
template <typename T, typename Fn>
void broadcast_apply(const T* a, const BroadcastIndex& ia, const T* b, const BroadcastIndex& ib, T* y, int64_t total,
                     const BroadcastRow& rows, Fn fn) {
  const int64_t inner = rows.length;
  const int64_t sa = rows.strides[0], sb = rows.strides[1];
  for (int64_t row = 0; row < total; row += inner) {
    const T* pa = a + ia.source(row);
    const T* pb = b + ib.source(row);
    T* py = y + row;
    if (sa == 1 && sb == 1) {
      for (int64_t j = 0; j < inner; ++j) py[j] = fn(pa[j], pb[j]);
    } else if (sa == 1) {
      const T vb = *pb;
      for (int64_t j = 0; j < inner; ++j) py[j] = fn(pa[j], vb);
    } else if (sb == 1) {
      const T va = *pa;
      for (int64_t j = 0; j < inner; ++j) py[j] = fn(va, pb[j]);
    } else {
      const T v = fn(*pa, *pb);
      for (int64_t j = 0; j < inner; ++j) py[j] = v;
    }
  }
}

template <typename T>
void run_arith(Arith op, const BroadcastIndex& ia, const BroadcastIndex& ib, const BroadcastRow& rows,
               std::span<const TensorView> in, std::span<const TensorView> out) {
  const T* a = in[0].as<T>();
  const T* b = in[1].as<T>();
  T* y = out[0].as<T>();
  const int64_t n = out[0].size();
  // One switch per call, not per element: each case is a loop the compiler vectorises.
  switch (op) {
    case Arith::kAdd:
      return broadcast_apply(a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kAdd, p, q); });
    case Arith::kSub:
      return broadcast_apply(a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kSub, p, q); });
    case Arith::kMul:
      return broadcast_apply(a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kMul, p, q); });
    case Arith::kDiv:
      return broadcast_apply(a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kDiv, p, q); });
    case Arith::kPRelu:
      return broadcast_apply(a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kPRelu, p, q); });
  }
}

class BinaryOp final : public Op {
 public:
  BinaryOp(const Node& node, Arith op) : op_(op) { node.attrs.check_known({}); }

  // The output may overwrite input 0 when it has the output's shape: each element is
  // read before it is written.
  OpTraits traits() const override {
    OpTraits t;
    t.inplace_input = 0;
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 2, 2);
    if (in[0].dtype() != in[1].dtype())
      throw OpError(fmt::format("inputs are {} and {}; they must have one type", dtype_name(in[0].dtype()),
                                dtype_name(in[1].dtype())));
    if (in[0].dtype() == DType::kBool || (op_ == Arith::kPRelu && in[0].dtype() != DType::kFloat32))
      throw UnsupportedError(fmt::format("{} inputs are not supported", dtype_name(in[0].dtype())));
    return {{in[0].dtype(), broadcast_shapes(in[0].shape(), in[1].shape())}};
  }

  OpCost cost(const OpSignature& sig) const override {
    return op_cost(*this, sig, 0,
                   CostExpr::of("FLOPs/element", op_ == Arith::kPRelu ? 2 : 1) *
                       CostExpr::of("elements", num_elements(sig.outputs[0].shape())));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& y = sig.outputs[0].shape();
    return make_kernel(
        {}, [op = op_, dtype = sig.inputs[0].dtype(), ia = BroadcastIndex(sig.inputs[0].shape(), y),
             ib = BroadcastIndex(sig.inputs[1].shape(), y),
             rows = broadcast_row(y, {sig.inputs[0].shape(), sig.inputs[1].shape()})](
                const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          if (dtype == DType::kInt64)
            run_arith<int64_t>(op, ia, ib, rows, in, out);
          else
            run_arith<float>(op, ia, ib, rows, in, out);
        });
  }

 private:
  Arith op_;
};

// Sum of any number of float32 inputs (broadcast): one add per output element per extra input.
class SumOp final : public Op {
 public:
  explicit SumOp(const Node& node) { node.attrs.check_known({}); }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    if (in.empty()) throw OpError("Sum needs at least one input");
    require_float(in);
    Shape s = required_shape(in, 0, "data_0");
    for (size_t i = 1; i < in.size(); ++i) s = broadcast_shapes(s, required_shape(in, i, "data"));
    return {{DType::kFloat32, s}};
  }

  OpCost cost(const OpSignature& sig) const override {
    return op_cost(*this, sig, 0,
                   CostExpr::of("inputs - 1", static_cast<int64_t>(sig.inputs.size()) - 1) *
                       CostExpr::of("elements", num_elements(sig.outputs[0].shape())));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& y = sig.outputs[0].shape();
    std::vector<BroadcastIndex> index;
    std::vector<BroadcastRow> rows;  // of (0, in0), then of (y, in_i)
    for (size_t i = 0; i < sig.inputs.size(); ++i) {
      index.emplace_back(sig.inputs[i].shape(), y);
      rows.push_back(broadcast_row(y, {i == 0 ? Shape{} : y, sig.inputs[i].shape()}));
    }
    return make_kernel(
        {}, [index, rows, identity = BroadcastIndex(y, y), scalar = BroadcastIndex(Shape{}, y)](
                const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          float* dst = out[0].f32();
          const int64_t total = out[0].size();
          const float zero = 0.0f;
          auto add = [](float a, float b) { return a + b; };
          // y = 0 + in0, then y += in_i: each step is a broadcast add with y itself.
          broadcast_apply(&zero, scalar, in[0].f32(), index[0], dst, total, rows[0], add);
          for (size_t i = 1; i < in.size(); ++i)
            broadcast_apply<float>(dst, identity, in[i].f32(), index[i], dst, total, rows[i], add);
        });
  }
};

}  // namespace

std::unique_ptr<Op> make_add(const Node& node) {
  return std::make_unique<BinaryOp>(node, Arith::kAdd);
}
std::unique_ptr<Op> make_sub(const Node& node) {
  return std::make_unique<BinaryOp>(node, Arith::kSub);
}
std::unique_ptr<Op> make_mul(const Node& node) {
  return std::make_unique<BinaryOp>(node, Arith::kMul);
}
std::unique_ptr<Op> make_div(const Node& node) {
  return std::make_unique<BinaryOp>(node, Arith::kDiv);
}
std::unique_ptr<Op> make_prelu(const Node& node) {
  return std::make_unique<BinaryOp>(node, Arith::kPRelu);
}
std::unique_ptr<Op> make_sum(const Node& node) {
  return std::make_unique<SumOp>(node);
}

}  // namespace minfer
