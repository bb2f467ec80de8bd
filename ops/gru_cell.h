// One GRU time step by ONNX's equations (gate order z, r, h; both linear_before_reset
// values) under one of two memory plans (docs/gru.md). "minimal": three B x H buffers
// (H and two scratch) hold the state and every intermediate, each gate from its own
// products with X_t and H_t-1. "fused": before the first step one GEMM projects the
// inputs of every step onto all three gates (a seq x B x 3H buffer); each step then runs
// one GEMM with R (linear_before_reset 1) or two (0: the candidate's product needs r first).
#pragma once

#include "ops/recurrent_cell.h"

namespace minfer {

class GruCell final : public RecurrentCell {
 public:
  explicit GruCell(const CellConfig& config) : RecurrentCell(config, 3) {}

  // The workspace starts with H [B, H].
  float* state(float* workspace, int) const override { return workspace; }
  int64_t scratch_floats() const override;
  int64_t gemm_scratch_floats(int threads) const override;
  std::vector<GateSpan> input_blocks() const override;
  std::vector<GateSpan> recurrent_blocks() const override;

  int64_t gate_matmuls() const override { return 3; }
  int64_t elementwise_flops_per_unit() const override;
  std::vector<std::string> sub_steps() const override;
  std::vector<BufferSpan> buffers() const override;

 private:
  void step_minimal(const RunContext& ctx, const CellWeights& weights, const float* x, int64_t t, ActiveRows active,
                    std::span<float> workspace) const override;
  void step_fused(const RunContext& ctx, const CellWeights& weights, int64_t t, ActiveRows active,
                  std::span<float> workspace) const override;
  // The plan's scratch after H: the fused plan's gate inputs [seq, B, 3H].
  int64_t gate_input_floats() const;
};

}  // namespace minfer
