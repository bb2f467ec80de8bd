// Reorder: a tensor from NCHW into the blocked layout NCHWc or back (ops/blocked_layout.h),
// put by the blocked_layout pass where a region of ops that run in NCHWc begins or ends.
// It computes nothing (0 MACs, 0 FLOPs): its cost is the bytes it reads and writes, which
// the report shows as what the layout costs.
#include <fmt/format.h>

#include "ops/blocked_layout.h"
#include "ops/kernels/threads.h"
#include "ops/kernels/transpose.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

class ReorderOp final : public Op {
 public:
  explicit ReorderOp(const Node& node) {
    node.attrs.check_known({"to", "lanes"});
    const std::string to = node.attrs.get_string("to", "");
    if (to != "NCHW" && to != "NCHWc") throw OpError(fmt::format("attribute 'to' must be NCHW or NCHWc, got '{}'", to));
    to_blocked_ = to == "NCHWc";
    lanes_ = node.attrs.get_int("lanes", 0);
    if (lanes_ <= 0) throw OpError(fmt::format("attribute 'lanes' must be positive, got {}", lanes_));
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    require_float(in);
    const Shape& x = in[0].shape();
    return {{DType::kFloat32, to_blocked_ ? blocked_shape(x, lanes_) : unblocked_shape(x, lanes_)}};
  }

  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape nchw = to_blocked_ ? sig.inputs[0].shape() : sig.outputs[0].shape();
    KernelFacts facts;
    facts.kernel = "transpose_4x4";
    facts.details = {{"from", layout_name(to_blocked_ ? 0 : lanes_)}, {"to", layout_name(to_blocked_ ? lanes_ : 0)}};
    return make_kernel(std::move(facts), [nchw, c = lanes_, to_blocked = to_blocked_](
                                             const RunContext& ctx, std::span<const TensorView> in,
                                             std::span<const TensorView> out, Workspace) {
      const int64_t blocks = nchw[0] * nchw[1] / c, pixels = nchw[2] * nchw[3], block = c * pixels;
      const int team =
          kernels::threads_worth_starting(blocks * block, blocks, ctx.num_threads, kernels::Work::kStreaming);
      const float* x = in[0].f32();
      float* y = out[0].f32();
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
      for (int64_t b = 0; b < blocks; ++b) {
        // A block is c planes of NCHW, or pixels x c of NCHWc.
        if (to_blocked)
          kernels::transpose(x + b * block, pixels, c, pixels, y + b * block, c);
        else
          kernels::transpose(x + b * block, c, pixels, c, y + b * block, pixels);
      }
    });
  }

 private:
  bool to_blocked_ = true;
  int64_t lanes_ = 0;
};

}  // namespace

std::unique_ptr<Op> make_reorder(const Node& node) {
  return std::make_unique<ReorderOp>(node);
}

}  // namespace minfer
