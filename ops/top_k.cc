// TopK: the K largest (or smallest) values along an axis and their int64 indices, on
// float32 or int64 data; torch.topk, sort and argsort export it. K must be known when
// the model compiles (a constant, or folded from shapes): the outputs' shape depends on
// it. Values come out sorted whatever `sorted` says (the spec leaves the order open
// then), and equal values in index order, as ONNX's reference and ONNX Runtime give
// them; a NaN counts as larger than any number, as in torch.topk. FLOPs: the compares of
// a partial sort, E(in) x ceil(log2 K) (at least one per element), as a count and not a
// measurement of the sort's work.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <vector>

#include "ops/kernels/threads.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

template <typename T>
bool above(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b)) return !std::isnan(b);
  return a > b;
}

// One slice of `n` values `stride` apart: its k first values by `largest`, ties by index.
template <typename T>
void top_k_slice(const T* x, int64_t n, int64_t stride, int64_t k, bool largest, std::vector<int64_t>& order, T* values,
                 int64_t* indices) {
  order.resize(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t i, int64_t j) {
    const T a = x[i * stride], b = x[j * stride];
    if (largest ? above(a, b) : above(b, a)) return true;
    if (largest ? above(b, a) : above(a, b)) return false;
    return i < j;
  });
  for (int64_t i = 0; i < k; ++i) {
    values[i * stride] = x[order[static_cast<size_t>(i)] * stride];
    indices[i * stride] = order[static_cast<size_t>(i)];
  }
}

class TopKOp final : public Op {
 public:
  explicit TopKOp(const Node& node) {
    node.attrs.check_known({"axis", "largest", "sorted", "k"});
    axis_ = node.attrs.get_int("axis", -1);
    largest_ = node.attrs.get_int("largest", 1) != 0;
    k_attr_ = node.attrs.get_int("k", -1);  // opset 1-9; later opsets pass K as input 1
  }

  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = 0b10;  // K
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 2);
    if (in[0].dtype() != DType::kFloat32 && in[0].dtype() != DType::kInt64)
      throw OpError(fmt::format("{} data is not supported", dtype_name(in[0].dtype())));
    const Shape& x = in[0].shape();
    Shape y = x;
    y[axis(x)] = k(in);
    return {{in[0].dtype(), y}, {DType::kInt64, y}};
  }

  OpCost cost(const OpSignature& sig) const override {
    const int64_t k = sig.outputs[0].shape()[axis(sig.inputs[0].shape())];
    const int64_t compares = std::max<int64_t>(1, std::bit_width(static_cast<uint64_t>(k - 1)));
    return op_cost(
        *this, sig, 0,
        CostExpr::of("ceil(log2 K)", compares) * CostExpr::of("input elements", num_elements(sig.inputs[0].shape())));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& x = sig.inputs[0].shape();
    const size_t a = axis(x);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < x.size(); ++d) (d < a ? outer : inner) *= d == a ? 1 : x[d];
    return make_kernel(
        {}, [outer, inner, n = x[a], k = sig.outputs[0].shape()[a], largest = largest_, dtype = sig.inputs[0].dtype()](
                const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          const int team = kernels::threads_worth_starting(outer * inner * n, outer * inner, ctx.num_threads,
                                                           kernels::Work::kStreaming);
          const auto run = [&]<typename T>(const T* src, T* values) {
            kernels::for_each_on_team(team, outer * inner, [&](int64_t s) {
              thread_local std::vector<int64_t> order;
              const int64_t o = s / inner, i = s % inner;
              top_k_slice(src + o * n * inner + i, n, inner, k, largest, order, values + o * k * inner + i,
                          out[1].as<int64_t>() + o * k * inner + i);
            });
          };
          if (dtype == DType::kInt64) return run(in[0].as<int64_t>(), out[0].as<int64_t>());
          run(in[0].f32(), out[0].f32());
        });
  }

 private:
  size_t axis(const Shape& x) const { return static_cast<size_t>(normalize_axis(axis_, std::ssize(x))); }

  int64_t k(std::span<const OpInput> in) const {
    int64_t k = k_attr_;
    if (in.size() > 1 && in[1].present) {
      const std::vector<int64_t> given = constant_ints(in, 1, "K");
      if (given.size() != 1) throw OpError(fmt::format("K must hold one value, got {}", given.size()));
      k = given[0];
    }
    const int64_t n = in[0].shape()[axis(in[0].shape())];
    if (k < 0) throw OpError(k == -1 && k_attr_ == -1 ? "K is missing" : fmt::format("K is negative ({})", k));
    if (k > n) throw OpError(fmt::format("K {} is larger than the axis's {} elements", k, n));
    if (k == 0) throw UnsupportedError("K 0 gives empty outputs; empty tensors are not supported");
    return k;
  }

  int64_t axis_ = -1;
  bool largest_ = true;
  int64_t k_attr_ = -1;
};

}  // namespace

std::unique_ptr<Op> make_top_k(const Node& node) {
  return std::make_unique<TopKOp>(node);
}

}  // namespace minfer
