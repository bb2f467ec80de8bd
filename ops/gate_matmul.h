// The matrix products of ONNX's recurrent cells (LSTM, GRU, RNN) on kernels::gemm: the
// gate inputs X*W^T + Wb and the recurrent term H*R^T + Rb, over a span of gate blocks
// (one gate, or several side by side). Weights that are initializers are packed once,
// in the blocks the cell's plan multiplies; weights fed as graph inputs are read in
// ONNX's layout, transposed, and packed by the GEMM on every product.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ops/kernels/gemm.h"
#include "ops/op.h"

namespace minfer {

// Gate blocks first .. first + count - 1 of W or R (each H rows), multiplied together.
struct GateSpan {
  int first = 0, count = 1;
  bool operator==(const GateSpan&) const = default;
};

// One direction's W [gates*H, D] and R [gates*H, H] as the GEMM's B operands.
class GateWeights {
 public:
  GateWeights() = default;
  // Initializers: W packed in the blocks `w_blocks`, R in `r_blocks` (the spans the
  // cell's products cover).
  static GateWeights packed(const kernels::GemmKernel& kernel, const float* w, const float* r, int64_t input_size,
                            int64_t hidden_size, std::span<const GateSpan> w_blocks,
                            std::span<const GateSpan> r_blocks);
  // Graph inputs, known only at run time: plain operands, no copy.
  static GateWeights plain(const kernels::GemmKernel& kernel, const float* w, const float* r, int64_t input_size,
                           int64_t hidden_size);
  // Bytes packed() holds for one direction: the weights' own size with each block's
  // columns padded to the kernel's panel width.
  static int64_t packed_bytes(const kernels::GemmKernel& kernel, int64_t input_size, int64_t hidden_size,
                              std::span<const GateSpan> w_blocks, std::span<const GateSpan> r_blocks);

  // The B operand (op(B) = the span's rows of W or R, transposed); a packed span must be
  // one of the blocks it was packed in.
  kernels::GemmOperand input(GateSpan span) const { return operand(w_, packed_w_, input_size_, span); }
  kernels::GemmOperand recurrent(GateSpan span) const { return operand(r_, packed_r_, hidden_size_, span); }
  int64_t input_size() const { return input_size_; }
  const kernels::GemmKernel& kernel() const { return *kernel_; }
  int64_t hidden_size() const { return hidden_size_; }

 private:
  struct Block {
    GateSpan span;
    kernels::PackedMatrix matrix;
  };
  kernels::GemmOperand operand(const float* plain, const std::vector<Block>& packed, int64_t k, GateSpan span) const;

  const kernels::GemmKernel* kernel_ = nullptr;
  const float* w_ = nullptr;
  const float* r_ = nullptr;
  int64_t input_size_ = 0, hidden_size_ = 0;
  std::vector<Block> packed_w_, packed_r_;  // empty when plain
};

// out[rows, count*H] = x[rows, D] * W^T + bias over the span; x's rows are `ldx` apart,
// out's `ldo`; bias (count*H floats, or nullptr) runs in the GEMM's epilogue.
void input_matmul(const RunContext& ctx, const GateWeights& weights, GateSpan span, const float* x, int64_t ldx,
                  int64_t rows, const float* bias, float* out, int64_t ldo, std::span<float> scratch);

// out[rows, count*H] (+)= h[rows, H] * R^T + bias over the span: added to out when
// `accumulate`, else written.
void recurrent_matmul(const RunContext& ctx, const GateWeights& weights, GateSpan span, const float* h, int64_t rows,
                      const float* bias, float* out, int64_t ldo, bool accumulate, std::span<float> scratch);

// Scratch floats (the GEMM's packing of the plain operands) of an input product over
// `input_span` with `input_rows` rows and a recurrent one over `recurrent_span` with
// `step_rows` rows, on up to `threads` threads.
int64_t gate_matmul_scratch_floats(const kernels::GemmKernel& kernel, int64_t input_size, int64_t hidden_size,
                                   GateSpan input_span, GateSpan recurrent_span, bool weights_packed,
                                   int64_t input_rows, int64_t step_rows, int threads);

}  // namespace minfer
