// One LSTM time step by ONNX's equations (gate order i, o, f, c) under one of two memory
// plans (docs/lstm.md). "minimal": four B x H buffers (C, H and two scratch) hold
// the state and every intermediate, and the gates are computed one after another, each
// from its own products with X_t and H_t-1. "fused" trades memory for speed: before the
// first step one GEMM projects the inputs of every step onto all four gates (a
// seq x B x 4H buffer), and each step adds H_t-1 * R^T to its rows in one GEMM.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ops/activation.h"
#include "ops/kernels/vector_activations.h"
#include "ops/lstm_gate_matmul.h"
#include "ops/op.h"
#include "profiler/buffer_span.h"

namespace minfer {

enum class LstmPlan { kMinimal, kFused };

// "minimal" or "fused"; throws OpError for anything else.
LstmPlan parse_lstm_plan(const std::string& name);
const char* lstm_plan_name(LstmPlan plan);

// Everything that fixes what one step computes, known once the op's inputs are.
struct LstmCellConfig {
  LstmPlan plan = LstmPlan::kMinimal;
  int64_t seq_length = 0, batch = 0, input_size = 0, hidden_size = 0;
  bool batch_major = false;  // layout 1: X is [batch, seq, D]
  bool has_bias = false, has_peephole = false, input_forget = false;
  bool weights_packed = false;                              // W and R are initializers, packed when the op binds
  const kernels::GemmKernel* gemm = nullptr;                // the GEMM micro-kernel the products run
  const kernels::VectorActivations* activations = nullptr;  // the gates' sigmoid and tanh
  std::optional<float> clip;                                // bounds every gate's input to [-clip, clip]
  Activation f{ActivationKind::kSigmoid}, g{ActivationKind::kTanh}, h{ActivationKind::kTanh};
};

// One direction's operands for a run.
struct LstmCellWeights {
  const GateWeights* gates = nullptr;
  const float* bias = nullptr;      // [8H]: Wb[iofc] then Rb[iofc]; nullptr without B
  const float* peephole = nullptr;  // [3H]: P[iof]; nullptr without P
};

// The batch rows a step updates: rows whose sequence is shorter than t + 1 keep their
// state (ONNX sequence_lens: int64 from ONNX files, whole numbers as float32 from net.json).
struct ActiveRows {
  const TensorView* lengths = nullptr;  // nullptr: every row is active
  int64_t t = 0;
  bool operator()(int64_t b) const {
    if (!lengths) return true;
    if (lengths->type.dtype == DType::kInt64) return t < lengths->as<int64_t>()[b];
    return static_cast<float>(t) < lengths->f32()[b];
  }
};

class LstmCell {
 public:
  explicit LstmCell(const LstmCellConfig& config) : c_(config) {}
  const LstmCellConfig& config() const { return c_; }

  // The workspace holds the state (C [B, H], then H [B, H]), the plan's scratch, then
  // the GEMM's packing scratch for the products' plain operands.
  // Sizes are checked products: X, W and R may be graph inputs of any shape that fits.
  int64_t state_floats() const { return checked_mul({2, c_.batch, c_.hidden_size}); }
  int64_t scratch_floats() const;
  int64_t gemm_scratch_floats(int threads) const;
  int64_t workspace_floats(int threads) const {
    return checked_add({state_floats(), scratch_floats(), gemm_scratch_floats(threads)});
  }
  float* cell_state(float* workspace) const { return workspace; }
  float* hidden_state(float* workspace) const { return workspace + c_.batch * c_.hidden_size; }

  // Once per direction, before its first step, on the whole X: the fused plan's gate
  // inputs X*W^T + Wb of every step; nothing for the minimal plan.
  void project_inputs(const RunContext& ctx, const LstmCellWeights& weights, const float* x,
                      std::span<float> workspace) const;
  // Time step t of X: updates C and H in `workspace` for the active rows.
  void step(const RunContext& ctx, const LstmCellWeights& weights, const float* x, int64_t t, ActiveRows active,
            std::span<float> workspace) const;

  // Gate blocks of W and R the plan multiplies per step (the minimal plan skips the
  // forget gate's under input_forget; the fused GEMMs always cover all four).
  int64_t gate_matmuls() const;
  // FLOPs per hidden unit, batch row and step outside the matmuls (docs/lstm.md).
  int64_t elementwise_flops_per_unit() const;
  // The plan's sub-steps in order, and its buffers with their lifetimes in sub-steps:
  // the same form as the arena's buffers, so the cell's plan is drawn like the arena's.
  std::vector<std::string> sub_steps() const;
  std::vector<BufferSpan> buffers() const;

 private:
  void step_minimal(const RunContext& ctx, const LstmCellWeights& weights, const float* x, int64_t t, ActiveRows active,
                    std::span<float> workspace) const;
  void step_fused(const RunContext& ctx, const LstmCellWeights& weights, int64_t t, ActiveRows active,
                  std::span<float> workspace) const;
  int64_t gate_input_flops(int gate) const;

  LstmCellConfig c_;
};

}  // namespace minfer
