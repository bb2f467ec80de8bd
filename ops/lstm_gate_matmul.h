// The LSTM cell's matrix products on kernels::gemm: the gate inputs X*W^T + Wb and the
// recurrent term H*R^T + Rb, over one gate block (the minimal plan) or all four (fused).
// Weights that are initializers are packed once; weights fed as graph inputs are read in
// ONNX's layout, transposed, and packed by the GEMM on every product.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ops/kernels/gemm.h"
#include "ops/op.h"

namespace minfer {

// The `gate` argument of a product over all four gate blocks.
constexpr int kAllGates = -1;

// One direction's W [4H, D] and R [4H, H] as the GEMM's B operands.
class GateWeights {
 public:
  GateWeights() = default;
  // Initializers: packed per gate block (`per_gate`: each product covers one gate) or
  // over the whole 4H width.
  static GateWeights packed(const kernels::GemmKernel& kernel, const float* w, const float* r, int64_t input_size,
                            int64_t hidden_size, bool per_gate);
  // Graph inputs, known only at run time: plain operands, no copy.
  static GateWeights plain(const kernels::GemmKernel& kernel, const float* w, const float* r, int64_t input_size,
                           int64_t hidden_size);
  // Bytes packed() holds for one direction: the weights' own size with each block's
  // columns padded to the kernel's panel width.
  static int64_t packed_bytes(const kernels::GemmKernel& kernel, int64_t input_size, int64_t hidden_size,
                              bool per_gate);

  // The B operand (op(B) = the gate rows of W or R, transposed) of gate block `gate`
  // (0..3, ONNX order i, o, f, c) or of kAllGates.
  kernels::GemmOperand input(int gate) const { return operand(w_, packed_w_, input_size_, gate); }
  kernels::GemmOperand recurrent(int gate) const { return operand(r_, packed_r_, hidden_size_, gate); }
  int64_t input_size() const { return input_size_; }
  const kernels::GemmKernel& kernel() const { return *kernel_; }
  int64_t hidden_size() const { return hidden_size_; }

 private:
  kernels::GemmOperand operand(const float* plain, const std::vector<kernels::PackedMatrix>& packed, int64_t k,
                               int gate) const;

  const kernels::GemmKernel* kernel_ = nullptr;
  const float* w_ = nullptr;
  const float* r_ = nullptr;
  int64_t input_size_ = 0, hidden_size_ = 0;
  std::vector<kernels::PackedMatrix> packed_w_, packed_r_;  // per gate block, or one; empty when plain
};

// Columns a product over `gate` covers: H for one gate block, 4H for kAllGates.
inline int64_t gate_columns(int64_t hidden_size, int gate) {
  return gate == kAllGates ? 4 * hidden_size : hidden_size;
}

// out[rows, cols] = x[rows, D] * W^T + bias, over the columns of `gate`; x's rows are
// `ldx` apart, out's `ldo`; bias (cols floats, or nullptr) runs in the GEMM's epilogue.
void input_matmul(const RunContext& ctx, const GateWeights& weights, int gate, const float* x, int64_t ldx,
                  int64_t rows, const float* bias, float* out, int64_t ldo, std::span<float> scratch);

// out[rows, cols] += h[rows, H] * R^T + bias, over the columns of `gate`.
void recurrent_matmul(const RunContext& ctx, const GateWeights& weights, int gate, const float* h, int64_t rows,
                      const float* bias, float* out, int64_t ldo, std::span<float> scratch);

// Scratch floats (the GEMM's packing of the plain operands) of an input and a recurrent
// product over `gate` with `input_rows` and `step_rows` rows, on up to `threads` threads.
int64_t gate_matmul_scratch_floats(const kernels::GemmKernel& kernel, int64_t input_size, int64_t hidden_size, int gate,
                                   bool weights_packed, int64_t input_rows, int64_t step_rows, int threads);

}  // namespace minfer
