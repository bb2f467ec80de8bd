// Softmax and LogSoftmax along one axis (opset 13 semantics; default axis -1).
// FLOPs per element: max, subtract, exp, add, divide (or log-subtract) = 5. Vectorised
// per ISA (ops/kernels/vector_activations.h), threads over the rows.
#include <fmt/format.h>
#include <omp.h>

#include "ops/kernels/threads.h"
#include "ops/kernels/vector_activations.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

class SoftmaxOp final : public Op {
 public:
  SoftmaxOp(const Node& node, bool log) : log_(log) {
    node.attrs.check_known({"axis"});
    axis_ = node.attrs.get_int("axis", -1);
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    require_float(in);
    normalize_axis(axis_, static_cast<int64_t>(in[0].shape().size()));
    return {in[0].type};
  }

  OpCost cost(const OpSignature& sig) const override {
    return op_cost(*this, sig, 0,
                   CostExpr::of("FLOPs/element", 5) * CostExpr::of("elements", num_elements(sig.outputs[0].shape())));
  }

  // Each softmax is one row of the vector set (the column of an inner axis is gathered
  // into the thread's workspace first), rows shared among threads when there are enough.
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    const Shape& s = sig.inputs[0].shape();
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(s.size())));
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= s[i];
    for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
    const int64_t n = s[axis], rows = outer * inner;
    const int threads = kernels::threads_worth_starting(rows * n, rows, ctx.num_threads, kernels::Work::kStreaming);
    KernelFacts facts;
    facts.workspace_bytes = inner > 1 ? checked_mul({4, n, threads}) : 0;
    const auto row_fn = kernels::vector_activations_for(ctx.isa)->softmax;
    return make_kernel(std::move(facts), [outer, inner, n, rows, threads, log = log_, row_fn](
                                             const RunContext&, std::span<const TensorView> in,
                                             std::span<const TensorView> out, Workspace workspace) {
      const float* x = in[0].f32();
      float* y = out[0].f32();
      const std::span<float> scratch = workspace.floats();
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t o = r / inner, i = r % inner, base = o * n * inner + i;
        if (inner == 1) {
          row_fn(x + base, y + base, n, log);
          continue;
        }
        float* column = scratch.data() + omp_get_thread_num() * n;
        for (int64_t j = 0; j < n; ++j) column[j] = x[base + j * inner];
        row_fn(column, column, n, log);
        for (int64_t j = 0; j < n; ++j) y[base + j * inner] = column[j];
      }
    });
  }

 private:
  bool log_;
  int64_t axis_;
};

}  // namespace

std::unique_ptr<Op> make_softmax(const Node& node) {
  return std::make_unique<SoftmaxOp>(node, false);
}
std::unique_ptr<Op> make_log_softmax(const Node& node) {
  return std::make_unique<SoftmaxOp>(node, true);
}

}  // namespace minfer
