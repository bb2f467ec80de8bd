// Element-wise unary math ops, one table row each: the op type, its FLOPs per element,
// its function on float32 (and on int64 where it has one) and, where the plain loop
// would call a scalar libm function, the vector one that runs instead. A new op of
// this kind is a row here and a line in ops/op_list.h; inference, cost with its
// formula, in-place running and folding come with it. (Activations, which fuse into
// epilogues and take attributes, are ops/activation.h.) FLOPs: 1 per element for each
// operation, a libm function (exp, log, sqrt, erf, sin, ...) counting as one, as the
// exponential does in the activations' counts.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "ops/kernels/vector_activations.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

using VectorFn = void (*)(float* y, int64_t n);

struct UnaryFn {
  const char* op_type;
  int64_t flops_per_element;
  float (*f32)(float);
  int64_t (*i64)(int64_t);                                 // nullptr: float32 only
  VectorFn kernels::VectorActivations::*vector = nullptr;  // in place over an array, per ISA
};

int64_t negate(int64_t v) {
  if (v == INT64_MIN) throw OpError("Neg of the smallest int64 overflows");
  return -v;
}

int64_t absolute(int64_t v) {
  return v < 0 ? negate(v) : v;
}

// Comparisons written so that a NaN stays NaN, as numpy's sign.
template <typename T>
T sign(T v) {
  return v > 0 ? T(1) : v < 0 ? T(-1) : v;
}

constexpr UnaryFn kUnaryOps[] = {
    {"Neg", 1, [](float x) { return -x; }, negate},
    {"Abs", 1, [](float x) { return std::fabs(x); }, absolute},
    {"Sign", 1, sign<float>, sign<int64_t>},
    {"Sqrt", 1, [](float x) { return std::sqrt(x); }, nullptr},
    {"Reciprocal", 1, [](float x) { return 1.0f / x; }, nullptr},
    {"Exp", 1, [](float x) { return std::exp(x); }, nullptr, &kernels::VectorActivations::exp},
    {"Log", 1, [](float x) { return std::log(x); }, nullptr},
    {"Floor", 1, [](float x) { return std::floor(x); }, nullptr},
    {"Ceil", 1, [](float x) { return std::ceil(x); }, nullptr},
    {"Round", 1, [](float x) { return std::nearbyint(x); }, nullptr},  // halves to even
    {"Erf", 1, [](float x) { return std::erf(x); }, nullptr, &kernels::VectorActivations::erf},
    {"Sin", 1, [](float x) { return std::sin(x); }, nullptr},
    {"Cos", 1, [](float x) { return std::cos(x); }, nullptr},
    {"Tan", 1, [](float x) { return std::tan(x); }, nullptr},
    {"Asin", 1, [](float x) { return std::asin(x); }, nullptr},
    {"Acos", 1, [](float x) { return std::acos(x); }, nullptr},
    {"Atan", 1, [](float x) { return std::atan(x); }, nullptr},
    {"Sinh", 1, [](float x) { return std::sinh(x); }, nullptr},
    {"Cosh", 1, [](float x) { return std::cosh(x); }, nullptr},
    {"Asinh", 1, [](float x) { return std::asinh(x); }, nullptr},
    {"Acosh", 1, [](float x) { return std::acosh(x); }, nullptr},
    {"Atanh", 1, [](float x) { return std::atanh(x); }, nullptr},
    {"Softsign", 3, [](float x) { return x / (1.0f + std::fabs(x)); }, nullptr},  // abs, add, divide
};

const UnaryFn& find_unary(const std::string& op_type) {
  for (const UnaryFn& u : kUnaryOps)
    if (op_type == u.op_type) return u;
  throw UnsupportedError(fmt::format("op type '{}' is not a unary op", op_type));
}

class UnaryOp final : public Op {
 public:
  explicit UnaryOp(const Node& node) : fn_(find_unary(node.op_type)) { node.attrs.check_known({}); }

  OpTraits traits() const override {
    OpTraits t;
    t.inplace_input = 0;
    t.elementwise = true;
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    if (in[0].dtype() == DType::kBool || (in[0].dtype() == DType::kInt64 && !fn_.i64))
      throw UnsupportedError(fmt::format("{} inputs are not supported", dtype_name(in[0].dtype())));
    return {in[0].type};
  }

  OpCost cost(const OpSignature& sig) const override {
    return op_cost(*this, sig, 0,
                   CostExpr::of("FLOPs/element", fn_.flops_per_element) *
                       CostExpr::of("elements", num_elements(sig.outputs[0].shape())));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    const VectorFn vector = fn_.vector ? kernels::vector_activations_for(ctx.isa)->*fn_.vector : nullptr;
    return make_kernel(
        {}, [fn = fn_, vector, dtype = sig.inputs[0].dtype()](const RunContext&, std::span<const TensorView> in,
                                                              std::span<const TensorView> out, Workspace) {
          const int64_t n = out[0].size();
          if (dtype == DType::kInt64) {
            for (int64_t i = 0; i < n; ++i) out[0].as<int64_t>()[i] = fn.i64(in[0].as<int64_t>()[i]);
            return;
          }
          const float* x = in[0].f32();
          float* y = out[0].f32();
          if (vector) {
            if (y != x && n > 0) std::memcpy(y, x, sizeof(float) * n);
            return vector(y, n);
          }
          for (int64_t i = 0; i < n; ++i) y[i] = fn.f32(x[i]);
        });
  }

 private:
  UnaryFn fn_;
};

}  // namespace

std::unique_ptr<Op> make_unary(const Node& node) {
  return std::make_unique<UnaryOp>(node);
}

}  // namespace minfer
