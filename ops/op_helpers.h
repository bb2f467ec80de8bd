// Helpers op implementations share: input checks, integer-valued constant inputs, the
// data-movement part of the cost, and a kernel made from a function.
#pragma once

#include <cmath>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "ops/op.h"

namespace minfer {

const Shape& required_shape(std::span<const OpInput> in, size_t index, const char* what);
void check_input_count(std::span<const OpInput> in, size_t min_count, size_t max_count);
// Throws OpError unless every present input (from `first` on) is float32: the type of
// the ops that compute (convolutions, activations, ...).
void require_float(std::span<const OpInput> in, size_t first = 0);

// The values of a constant integer-valued input (Reshape's shape, Pad's pads, axes):
// int64, or float32 holding integers (net.json). Throws OpError when it is not a
// constant or not integral.
std::vector<int64_t> constant_ints(std::span<const OpInput> in, size_t index, const char* what);

// The traffic part of every op's cost: params (constant data inputs' elements), bytes
// read (the data inputs) and bytes written (the outputs). An input is data unless the
// op's traits say it is only an index (non_data_inputs) or only its type is read.
Cost data_movement(const OpTraits& traits, const OpSignature& sig);
// An op's cost: data_movement plus its MACs and FLOPs with their formulas.
OpCost op_cost(const Op& op, const OpSignature& sig, CostExpr macs, CostExpr flops);

// `axis` in [-rank, rank) as an index in [0, rank); throws OpError naming `what`.
// The FLOPs of a product of `macs` multiply-adds with `act` in its epilogue: 2 per
// multiply-add, plus the activation's FLOPs per element on each of `output_elements`.
CostExpr product_flops(const CostExpr& macs, const Activation& act, int64_t output_elements);
// `flops` plus, when `act` is an activation (one an op took in), its FLOPs per element on
// each of `elements`, named `what` in the formula.
CostExpr plus_activation_flops(const CostExpr& flops, const Activation& act, const char* what, int64_t elements);

// How a following per-channel y * scale + shift folds into a weighted op (Conv,
// ConvTranspose, Gemm): the blocker when the weights (input 1) or the bias (input 2,
// when present) are not constants or the op already runs an activation; else the
// weights with value i scaled by the scale of its output channel channel_of(i), and for
// each of the `channels` output channels the bias old_bias(c) * scale[c] + shift[c]
// (old_bias reads the bias input; 0 without one).
Op::AffineFold fold_affine_into_weights(const OpSignature& sig, bool runs_activation, int64_t channels,
                                        const ChannelAffine& a, const std::function<int64_t(int64_t)>& channel_of,
                                        const std::function<double(const Tensor& bias, int64_t c)>& old_bias);

// max and min where a NaN operand wins, as in numpy and ONNX (std::max keeps its first
// operand when the comparison is false).
inline float nan_max(float acc, float v) {
  return acc < v || std::isnan(v) ? v : acc;
}
inline float nan_min(float acc, float v) {
  return acc > v || std::isnan(v) ? v : acc;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what = "axis");

// A kernel whose run is a function object: for ops whose kernel holds nothing but what
// the function captures.
template <typename Run>
class FunctionKernel final : public Kernel {
 public:
  FunctionKernel(KernelFacts facts, Run run) : Kernel(std::move(facts)), run_(std::move(run)) {}
  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           Workspace workspace) const override {
    run_(ctx, in, out, workspace);
  }

 private:
  Run run_;
};

template <typename Run>
std::unique_ptr<Kernel> make_kernel(KernelFacts facts, Run run) {
  return std::make_unique<FunctionKernel<Run>>(std::move(facts), std::move(run));
}

}  // namespace minfer
