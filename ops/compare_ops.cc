// Comparisons with broadcasting (Equal, Less, Greater: bool outputs) and Where, which
// picks X or Y by a bool condition. On float32 or int64 inputs; 1 FLOP per output
// element for a comparison, 0 for Where.
#include <fmt/format.h>

#include <cstring>

#include "ops/broadcast.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

enum class Compare { kEqual, kLess, kGreater };

template <typename T>
void compare_all(Compare c, const BroadcastIndex& ia, const BroadcastIndex& ib, std::span<const TensorView> in,
                 const TensorView& out) {
  const T* a = in[0].as<T>();
  const T* b = in[1].as<T>();
  uint8_t* y = out.as<uint8_t>();
  for (int64_t i = 0, n = out.size(); i < n; ++i) {
    const T x = a[ia.source(i)], z = b[ib.source(i)];
    y[i] = c == Compare::kEqual ? x == z : c == Compare::kLess ? x < z : x > z;
  }
}

class CompareOp final : public Op {
 public:
  CompareOp(const Node& node, Compare c) : compare_(c) { node.attrs.check_known({}); }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 2, 2);
    if (in[0].dtype() != in[1].dtype())
      throw OpError(fmt::format("inputs are {} and {}; they must have one type", dtype_name(in[0].dtype()),
                                dtype_name(in[1].dtype())));
    return {{DType::kBool, broadcast_shapes(in[0].shape(), in[1].shape())}};
  }
  OpCost cost(const OpSignature& sig) const override {
    return op_cost(*this, sig, 0,
                   CostExpr::of("FLOPs/element", 1) * CostExpr::of("elements", num_elements(sig.outputs[0].shape())));
  }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& y = sig.outputs[0].shape();
    return make_kernel(
        {}, [c = compare_, dtype = sig.inputs[0].dtype(), ia = BroadcastIndex(sig.inputs[0].shape(), y),
             ib = BroadcastIndex(sig.inputs[1].shape(), y)](const RunContext&, std::span<const TensorView> in,
                                                            std::span<const TensorView> out, Workspace) {
          switch (dtype) {
            case DType::kFloat32: return compare_all<float>(c, ia, ib, in, out[0]);
            case DType::kInt64: return compare_all<int64_t>(c, ia, ib, in, out[0]);
            case DType::kBool: return compare_all<uint8_t>(c, ia, ib, in, out[0]);
          }
        });
  }

 private:
  Compare compare_;
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
std::unique_ptr<Op> make_where(const Node& node) {
  return std::make_unique<WhereOp>(node);
}

}  // namespace minfer
