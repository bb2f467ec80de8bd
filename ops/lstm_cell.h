// One LSTM time step by ONNX's equations (gate order i, o, f, c) under one of two memory
// plans (docs/lstm.md). "minimal": four B x H buffers (C, H and two scratch) hold
// the state and every intermediate, and the gates are computed one after another, each
// from its own products with X_t and H_t-1. "fused" trades memory for speed: before the
// first step one GEMM projects the inputs of every step onto all four gates (a
// seq x B x 4H buffer), and each step adds H_t-1 * R^T to its rows in one GEMM.
#pragma once

#include "ops/recurrent_cell.h"

namespace minfer {

class LstmCell final : public RecurrentCell {
 public:
  explicit LstmCell(const CellConfig& config) : RecurrentCell(config, 4) {}

  // The workspace starts with C [B, H], then H [B, H].
  int states() const override { return 2; }
  float* state(float* workspace, int index) const override {
    return index == 0 ? workspace + c_.batch * c_.hidden_size : workspace;
  }
  int64_t scratch_floats() const override;
  int64_t gemm_scratch_floats(int threads) const override;
  std::vector<GateSpan> input_blocks() const override;
  std::vector<GateSpan> recurrent_blocks() const override { return input_blocks(); }

  // The minimal plan skips the forget gate's products under input_forget; the fused
  // GEMMs always cover all four.
  int64_t gate_matmuls() const override;
  int64_t elementwise_flops_per_unit() const override;
  std::vector<std::string> sub_steps() const override;
  std::vector<BufferSpan> buffers() const override;

 private:
  void step_minimal(const RunContext& ctx, const CellWeights& weights, const float* x, int64_t t, ActiveRows active,
                    std::span<float> workspace) const override;
  void step_fused(const RunContext& ctx, const CellWeights& weights, int64_t t, ActiveRows active,
                  std::span<float> workspace) const override;
  void finish_gate(const CellWeights& w, int gate, const float* cell, float* pre, int64_t ld) const;
  int64_t gate_input_flops(int gate) const;
};

}  // namespace minfer
