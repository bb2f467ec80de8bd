// Element-wise unary math ops, one table row each: the op type, its FLOPs per element
// and its function on float32 (and on int64 where it has one). A new op of this kind is
// a row here and a line in ops/op_list.h; inference, cost with its formula, in-place
// running and folding come with it. (Activations, which fuse into epilogues and take
// attributes, are ops/activation.h.)
#include <fmt/format.h>

#include <cmath>

#include "ops/op_helpers.h"

namespace minfer {
namespace {

struct UnaryFn {
  const char* op_type;
  int64_t flops_per_element;
  float (*f32)(float);
  int64_t (*i64)(int64_t);  // nullptr: float32 only
};

int64_t negate(int64_t v) {
  if (v == INT64_MIN) throw OpError("Neg of the smallest int64 overflows");
  return -v;
}

constexpr UnaryFn kUnaryOps[] = {
    {"Neg", 1, [](float x) { return -x; }, negate},
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

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    return make_kernel({}, [fn = fn_, dtype = sig.inputs[0].dtype()](const RunContext&, std::span<const TensorView> in,
                                                                     std::span<const TensorView> out, Workspace) {
      const int64_t n = out[0].size();
      if (dtype == DType::kInt64) {
        for (int64_t i = 0; i < n; ++i) out[0].as<int64_t>()[i] = fn.i64(in[0].as<int64_t>()[i]);
        return;
      }
      const float* x = in[0].f32();
      float* y = out[0].f32();
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
