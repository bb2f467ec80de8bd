// Element-wise binary ops with ONNX broadcasting: Add, Sub, Mul, Div on float32 or
// int64 (1 FLOP per output element; int64 arithmetic is checked and integer division
// truncates, as C and ONNX Runtime), Mod (1: with fmod 0, int64 only, the remainder takes
// the divisor's sign, as Python's %; with fmod 1, C's fmod and %, the dividend's; Swin
// Transformer's window shifts), Pow on float32 (1, as the other binaries), PRelu
// (2: compare and multiply); variadic Sum, Min, Max ((n-1) per output element for n
// inputs; Min and Max also on int64) and Mean (n: the adds and one divide). A binary op may run a fused float
// activation on its output (ResNet's residual Add + Relu; the activation's FLOPs count).
#include <fmt/format.h>

#include <cmath>

#include "ops/activation.h"
#include "ops/broadcast.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

enum class Arith { kAdd, kSub, kMul, kDiv, kMod, kFmod, kPow, kPRelu };

// a^b by squaring, checked: numpy refuses negative integer exponents, and so does this.
int64_t int_pow(int64_t a, int64_t b) {
  if (b < 0) throw OpError(fmt::format("int64 {} to the negative power {}", a, b));
  int64_t r = 1;
  bool overflow = false;
  for (; b > 0 && !overflow; b >>= 1) {
    if (b & 1) overflow = __builtin_mul_overflow(r, a, &r);
    if (b > 1 && !overflow) overflow = __builtin_mul_overflow(a, a, &a);
  }
  if (overflow) throw OpError("int64 Pow overflows");
  return r;
}

template <typename T>
T apply(Arith op, T a, T b) {
  if constexpr (std::is_same_v<T, int64_t>) {
    T r = 0;
    bool overflow = false;
    switch (op) {
      case Arith::kAdd: overflow = __builtin_add_overflow(a, b, &r); break;
      case Arith::kSub: overflow = __builtin_sub_overflow(a, b, &r); break;
      case Arith::kMul: overflow = __builtin_mul_overflow(a, b, &r); break;
      case Arith::kPow: return int_pow(a, b);
      case Arith::kMod:
      case Arith::kFmod:
        if (b == 0) throw OpError("integer modulo by zero");
        r = b == -1 ? 0 : a % b;  // INT64_MIN % -1 overflows in C
        return op == Arith::kMod && r != 0 && (r < 0) != (b < 0) ? r + b : r;
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
      case Arith::kMod:  // float32 only with fmod 1 (infer)
      case Arith::kFmod: return std::fmod(a, b);
      case Arith::kPow: return b == 2.0f ? a * a : std::pow(a, b);  // the square of a norm's variance
      case Arith::kPRelu: return a < 0.0f ? b * a : a;
    }
    return a;
  }
}

// y = fn(a, b) over the broadcast shape, row by row (broadcast_row): each input is read
// with a stride of 0 or 1 along a row, so the common cases run as plain loops. `finish`
// runs on each row once written, while it is in cache (a fused activation).
template <typename T, typename Fn, typename Finish = void (*)(T*, int64_t)>
void broadcast_apply(
    const T* a, const BroadcastIndex& ia, const T* b, const BroadcastIndex& ib, T* y, int64_t total,
    const BroadcastRow& rows, Fn fn, Finish finish = [](T*, int64_t) {}) {
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
    finish(py, inner);
  }
}

// `finish` runs on each output row (see broadcast_apply).
template <typename T, typename Finish>
void run_arith(Arith op, const BroadcastIndex& ia, const BroadcastIndex& ib, const BroadcastRow& rows,
               std::span<const TensorView> in, std::span<const TensorView> out, Finish finish) {
  const T* a = in[0].as<T>();
  const T* b = in[1].as<T>();
  T* y = out[0].as<T>();
  const int64_t n = out[0].size();
  // One switch per call, not per element: each case is a loop the compiler vectorises.
  switch (op) {
    case Arith::kAdd:
      return broadcast_apply(
          a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kAdd, p, q); }, finish);
    case Arith::kSub:
      return broadcast_apply(
          a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kSub, p, q); }, finish);
    case Arith::kMul:
      return broadcast_apply(
          a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kMul, p, q); }, finish);
    case Arith::kDiv:
      return broadcast_apply(
          a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kDiv, p, q); }, finish);
    case Arith::kMod:
      return broadcast_apply(
          a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kMod, p, q); }, finish);
    case Arith::kFmod:
      return broadcast_apply(
          a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kFmod, p, q); }, finish);
    case Arith::kPow:
      return broadcast_apply(
          a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kPow, p, q); }, finish);
    case Arith::kPRelu:
      return broadcast_apply(
          a, ia, b, ib, y, n, rows, [](T p, T q) { return apply(Arith::kPRelu, p, q); }, finish);
  }
}

class BinaryOp final : public Op {
 public:
  BinaryOp(const Node& node, Arith op) : op_(op) {
    Attributes attrs = node.attrs;
    activation_ = take_fused_activation(attrs);
    if (op == Arith::kMod) {
      const int64_t fmod = attrs.get_int("fmod", 0);
      if (fmod != 0 && fmod != 1) throw OpError(fmt::format("attribute 'fmod' must be 0 or 1, got {}", fmod));
      if (fmod == 1) op_ = Arith::kFmod;
      attrs.erase("fmod");
    }
    attrs.check_known({});
  }

  // The output may overwrite input 0 when it has the output's shape: each element is
  // read before it is written. A float activation reading the output (a residual Add's
  // Relu) runs on each row as it is written, saving a pass over the tensor.
  OpTraits traits() const override {
    OpTraits t;
    t.inplace_input = 0;
    t.fuses_activation = true;
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 2, 2);
    for (const OpInput& x : in)
      if (x.dtype() != DType::kFloat32 && x.dtype() != DType::kInt64)
        throw UnsupportedError(fmt::format("{} inputs are not supported", dtype_name(x.dtype())));
    // Pow's exponent may have a type of its own (ONNX's T1); the result has the base's.
    if (op_ == Arith::kPow) return {{in[0].dtype(), broadcast_shapes(in[0].shape(), in[1].shape())}};
    if (in[0].dtype() != in[1].dtype())
      throw OpError(fmt::format("inputs are {} and {}; they must have one type", dtype_name(in[0].dtype()),
                                dtype_name(in[1].dtype())));
    if (op_ == Arith::kMod && in[0].dtype() == DType::kFloat32)
      throw OpError("float32 Mod needs fmod 1 (ONNX: Python's % is defined for integers only)");
    if (op_ == Arith::kPRelu && in[0].dtype() != DType::kFloat32)
      throw UnsupportedError(fmt::format("{} inputs are not supported", dtype_name(in[0].dtype())));
    if (activation_.kind != ActivationKind::kNone && in[0].dtype() != DType::kFloat32)
      throw OpError(fmt::format("a fused {} needs float32 inputs, not {}", activation_name(activation_),
                                dtype_name(in[0].dtype())));
    return {{in[0].dtype(), broadcast_shapes(in[0].shape(), in[1].shape())}};
  }

  OpCost cost(const OpSignature& sig) const override {
    const int64_t elements = num_elements(sig.outputs[0].shape());
    const CostExpr flops =
        CostExpr::of("FLOPs/element", op_ == Arith::kPRelu ? 2 : 1) * CostExpr::of("elements", elements);
    return op_cost(*this, sig, 0, plus_activation_flops(flops, activation_, "elements", elements));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& y = sig.outputs[0].shape();
    KernelFacts facts;
    if (activation_.kind != ActivationKind::kNone) facts.details["fused_activation"] = activation_name(activation_);
    if (sig.inputs[0].dtype() != sig.inputs[1].dtype()) return bind_mixed_pow(sig, std::move(facts), activation_);
    return make_kernel(
        std::move(facts),
        [op = op_, dtype = sig.inputs[0].dtype(), ia = BroadcastIndex(sig.inputs[0].shape(), y),
         ib = BroadcastIndex(sig.inputs[1].shape(), y),
         rows = broadcast_row(y, {sig.inputs[0].shape(), sig.inputs[1].shape()}), act = activation_](
            const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          if (dtype == DType::kInt64)
            run_arith<int64_t>(op, ia, ib, rows, in, out, [](int64_t*, int64_t) {});
          else
            run_arith<float>(op, ia, ib, rows, in, out, [&act](float* row, int64_t n) { act.apply(row, n); });
        });
  }

 private:
  // Pow of a base and an exponent of different types: in double, then the base's type
  // (an int64 result truncates, as numpy's astype does; one out of range is an error).
  static std::unique_ptr<Kernel> bind_mixed_pow(const OpSignature& sig, KernelFacts facts, const Activation& act) {
    const Shape& y = sig.outputs[0].shape();
    return make_kernel(
        std::move(facts),
        [ia = BroadcastIndex(sig.inputs[0].shape(), y), ib = BroadcastIndex(sig.inputs[1].shape(), y),
         int_base = sig.inputs[0].dtype() == DType::kInt64,
         act](const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          for (int64_t i = 0; i < out[0].size(); ++i) {
            const int64_t a = ia.source(i), b = ib.source(i);
            if (int_base) {
              const double r = std::pow(double(in[0].as<int64_t>()[a]), double(in[1].f32()[b]));
              if (!(std::fabs(r) < 9.2e18)) throw OpError(fmt::format("int64 Pow gives {}, out of range", r));
              out[0].as<int64_t>()[i] = static_cast<int64_t>(r);
            } else {
              out[0].f32()[i] = static_cast<float>(std::pow(double(in[0].f32()[a]), double(in[1].as<int64_t>()[b])));
            }
          }
          if (!int_base) act.apply(out[0].f32(), out[0].size());
        });
  }

  Arith op_;
  Activation activation_;  // fused by the fuse_activations pass
};

enum class Variadic { kSum, kMin, kMax, kMean };

// Sum, Min, Max or Mean of any number of float32 inputs (broadcast): one operation per
// output element per extra input, and Mean's divide.
class VariadicOp final : public Op {
 public:
  VariadicOp(const Node& node, Variadic kind) : kind_(kind) { node.attrs.check_known({}); }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    if (in.empty()) throw OpError("needs at least one input");
    // Min and Max also compare int64 (torch.clamp and min/max on sizes export them).
    const bool ints = (kind_ == Variadic::kMin || kind_ == Variadic::kMax) && in[0].dtype() == DType::kInt64;
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i].dtype() != (ints ? DType::kInt64 : DType::kFloat32))
        throw OpError(fmt::format("input {} is {}; this op computes on {}", i, dtype_name(in[i].dtype()),
                                  ints ? "int64 like input 0" : "float32"));
    Shape s = required_shape(in, 0, "data_0");
    for (size_t i = 1; i < in.size(); ++i) s = broadcast_shapes(s, required_shape(in, i, "data"));
    return {{in[0].dtype(), s}};
  }

  OpCost cost(const OpSignature& sig) const override {
    const int64_t n = static_cast<int64_t>(sig.inputs.size());
    const CostExpr per_element =
        kind_ == Variadic::kMean ? CostExpr::of("inputs", n) : CostExpr::of("inputs - 1", n - 1);
    return op_cost(*this, sig, 0, per_element * CostExpr::of("elements", num_elements(sig.outputs[0].shape())));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const bool ints = sig.inputs[0].dtype() == DType::kInt64;
    switch (kind_) {
      case Variadic::kMin:
        if (ints)
          return bind_as<int64_t>(
              sig, [](int64_t a, int64_t b) { return std::min(a, b); }, 1.0f);
        return bind_as<float>(
            sig, [](float a, float b) { return nan_min(a, b); }, 1.0f);
      case Variadic::kMax:
        if (ints)
          return bind_as<int64_t>(
              sig, [](int64_t a, int64_t b) { return std::max(a, b); }, 1.0f);
        return bind_as<float>(
            sig, [](float a, float b) { return nan_max(a, b); }, 1.0f);
      case Variadic::kMean:
        return bind_as<float>(
            sig, [](float a, float b) { return a + b; }, 1.0f / static_cast<float>(sig.inputs.size()));
      case Variadic::kSum: break;
    }
    return bind_as<float>(
        sig, [](float a, float b) { return a + b; }, 1.0f);
  }

 private:
  // y = in0, then y = fn(y, in_i) for each further input, then y *= scale (float32 only).
  template <typename T, typename Fn>
  static std::unique_ptr<Kernel> bind_as(const OpSignature& sig, Fn fn, float scale) {
    const Shape& y = sig.outputs[0].shape();
    std::vector<BroadcastIndex> index;
    std::vector<BroadcastRow> rows;  // of (0, in0), then of (y, in_i)
    for (size_t i = 0; i < sig.inputs.size(); ++i) {
      index.emplace_back(sig.inputs[i].shape(), y);
      rows.push_back(broadcast_row(y, {i == 0 ? Shape{} : y, sig.inputs[i].shape()}));
    }
    return make_kernel(
        {}, [index, rows, fn, scale, identity = BroadcastIndex(y, y), scalar = BroadcastIndex(Shape{}, y)](
                const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          T* dst = out[0].as<T>();
          const int64_t total = out[0].size();
          const T zero = 0;
          // y = in0 (a broadcast copy), then y = fn(y, in_i): each step a broadcast op with y itself.
          broadcast_apply<T>(&zero, scalar, in[0].as<T>(), index[0], dst, total, rows[0], [](T, T b) { return b; });
          for (size_t i = 1; i < in.size(); ++i)
            broadcast_apply<T>(dst, identity, in[i].as<T>(), index[i], dst, total, rows[i], fn);
          if (scale != 1.0f)  // Mean's divide; Min and Max (the int64 ones) pass 1
            for (int64_t i = 0; i < total; ++i) dst[i] = static_cast<T>(dst[i] * scale);
        });
  }

  Variadic kind_;
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
std::unique_ptr<Op> make_mod(const Node& node) {
  return std::make_unique<BinaryOp>(node, Arith::kMod);
}
std::unique_ptr<Op> make_prelu(const Node& node) {
  return std::make_unique<BinaryOp>(node, Arith::kPRelu);
}
std::unique_ptr<Op> make_pow(const Node& node) {
  return std::make_unique<BinaryOp>(node, Arith::kPow);
}
std::unique_ptr<Op> make_sum(const Node& node) {
  return std::make_unique<VariadicOp>(node, Variadic::kSum);
}
std::unique_ptr<Op> make_min(const Node& node) {
  return std::make_unique<VariadicOp>(node, Variadic::kMin);
}
std::unique_ptr<Op> make_max(const Node& node) {
  return std::make_unique<VariadicOp>(node, Variadic::kMax);
}
std::unique_ptr<Op> make_mean(const Node& node) {
  return std::make_unique<VariadicOp>(node, Variadic::kMean);
}

}  // namespace minfer
