// CumSum: running sums along an axis (torch.cumsum), inclusive or `exclusive` (each sum
// leaves out its own element), forward or in `reverse`, on float32 or int64. The axis
// input must be a constant (folded from shapes at the latest). FLOPs: 1 add per element.
#include <fmt/format.h>

#include "ops/kernels/threads.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

// One outer slice of n rows of `inner` elements: row j of y = the sum of the rows of x
// before it (exclusive) or up to it, in the direction `step` (+1 or -1) walks.
template <typename T>
void cum_sum_slice(const T* x, T* y, int64_t n, int64_t inner, bool exclusive, bool reverse) {
  const int64_t first = reverse ? n - 1 : 0, step = reverse ? -1 : 1;
  for (int64_t i = 0; i < inner; ++i) y[first * inner + i] = exclusive ? T(0) : x[first * inner + i];
  for (int64_t j = 1, at = first + step; j < n; ++j, at += step) {
    const T* add = x + (exclusive ? at - step : at) * inner;
    const T* prev = y + (at - step) * inner;
    T* row = y + at * inner;
    for (int64_t i = 0; i < inner; ++i) row[i] = prev[i] + add[i];
  }
}

class CumSumOp final : public Op {
 public:
  explicit CumSumOp(const Node& node) {
    node.attrs.check_known({"exclusive", "reverse"});
    exclusive_ = node.attrs.get_int("exclusive", 0) != 0;
    reverse_ = node.attrs.get_int("reverse", 0) != 0;
  }

  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = 0b10;  // axis
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 2, 2);
    if (in[0].dtype() != DType::kFloat32 && in[0].dtype() != DType::kInt64)
      throw OpError(fmt::format("{} data is not supported", dtype_name(in[0].dtype())));
    if (in[0].shape().empty()) throw OpError("x must have at least one axis");
    axis(in);
    return {in[0].type};
  }

  OpCost cost(const OpSignature& sig) const override {
    return op_cost(*this, sig, 0, CostExpr::of("elements", num_elements(sig.inputs[0].shape())));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& x = sig.inputs[0].shape();
    const size_t a = axis(sig.inputs);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < x.size(); ++d)
      if (d != a) (d < a ? outer : inner) *= x[d];
    return make_kernel(
        {}, [outer, inner, n = x[a], exclusive = exclusive_, reverse = reverse_, dtype = sig.inputs[0].dtype()](
                const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          const int team =
              kernels::threads_worth_starting(outer * n * inner, outer, ctx.num_threads, kernels::Work::kStreaming);
          const auto run = [&]<typename T>(const T* x, T* y) {
            kernels::for_each_on_team(team, outer, [&](int64_t o) {
              cum_sum_slice(x + o * n * inner, y + o * n * inner, n, inner, exclusive, reverse);
            });
          };
          if (dtype == DType::kInt64) return run(in[0].as<int64_t>(), out[0].as<int64_t>());
          run(in[0].f32(), out[0].f32());
        });
  }

 private:
  size_t axis(std::span<const OpInput> in) const {
    const std::vector<int64_t> a = constant_ints(in, 1, "axis");
    if (a.size() != 1) throw OpError(fmt::format("axis must hold one value, got {}", a.size()));
    return static_cast<size_t>(normalize_axis(a[0], std::ssize(in[0].shape())));
  }

  bool exclusive_ = false, reverse_ = false;
};

}  // namespace

std::unique_ptr<Op> make_cum_sum(const Node& node) {
  return std::make_unique<CumSumOp>(node);
}

}  // namespace minfer
