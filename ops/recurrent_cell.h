// What the cells of ONNX's recurrent ops (LSTM, GRU, RNN) share: the memory plan they
// run under (docs/lstm.md, docs/gru.md), their configuration and operands, the rows a
// step updates, and the interface ops/recurrent_op.cc drives them through, one time
// step at a time, in every direction.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ops/gate_matmul.h"
#include "ops/kernels/vector_activations.h"
#include "ops/op.h"
#include "profiler/buffer_span.h"

namespace minfer {

// "minimal": a few B x H buffers, each gate from its own products; "fused": the input
// products of every step in one GEMM before the first step, fewer and wider per step.
enum class CellPlan { kMinimal, kFused };

// "minimal" or "fused", or nullopt for "auto" (the op chooses by size, see
// recurrent_op.cc); throws OpError for anything else.
std::optional<CellPlan> parse_cell_plan(const std::string& name);
const char* cell_plan_name(CellPlan plan);

// Everything that fixes what one step computes, known once the op's inputs are.
struct CellConfig {
  CellPlan plan = CellPlan::kMinimal;
  int64_t seq_length = 0, batch = 0, input_size = 0, hidden_size = 0;
  bool batch_major = false;  // layout 1: X is [batch, seq, D]
  bool has_bias = false, has_peephole = false;
  bool input_forget = false;                                // LSTM: f = 1 - i
  bool linear_before_reset = false;                         // GRU: r (.) (Ht-1*Rh^T + Rbh)
  bool relu = false;                                        // RNN: f = Relu (PyTorch's nonlinearity='relu'), not Tanh
  bool weights_packed = false;                              // W and R are initializers, packed when the op binds
  const kernels::GemmKernel* gemm = nullptr;                // the GEMM micro-kernel the products run
  const kernels::VectorActivations* activations = nullptr;  // sigmoid and tanh
  std::optional<float> clip;                                // bounds every gate's input to [-clip, clip]
};

// One direction's operands for a run.
struct CellWeights {
  const GateWeights* gates = nullptr;
  const float* bias = nullptr;      // [2*gates*H]: Wb then Rb; nullptr without B
  const float* peephole = nullptr;  // LSTM's [3H]: P[iof]; nullptr without P
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

class RecurrentCell {
 public:
  // `gates`: the blocks of H rows in W and R.
  RecurrentCell(const CellConfig& config, int gates) : c_(config), gates_(gates) {}
  virtual ~RecurrentCell() = default;
  const CellConfig& config() const { return c_; }

  // The state tensors, B x H floats each in the workspace: 0 the hidden state H (initial_h,
  // Y_h), 1 the LSTM's cell state C (initial_c, Y_c).
  virtual int states() const { return 1; }
  virtual float* state(float* workspace, int index) const = 0;
  // The workspace holds the state, the plan's scratch, then the GEMM's packing scratch
  // for the products' plain operands. Sizes are checked products: X, W and R may be
  // graph inputs of any shape that fits.
  int64_t state_floats() const { return checked_mul({states(), c_.batch, c_.hidden_size}); }
  virtual int64_t scratch_floats() const = 0;
  virtual int64_t gemm_scratch_floats(int threads) const = 0;
  int64_t workspace_floats(int threads) const {
    return checked_add({state_floats(), scratch_floats(), gemm_scratch_floats(threads)});
  }
  // The blocks of W and R the plan's products cover: how initializers are packed.
  virtual std::vector<GateSpan> input_blocks() const = 0;
  virtual std::vector<GateSpan> recurrent_blocks() const = 0;

  // Once per direction, before its first step, on the whole X: the fused plan's gate
  // inputs X*W^T + Wb of every step, [seq, B, gates*H] after the state; nothing for the
  // minimal plan.
  void project_inputs(const RunContext& ctx, const CellWeights& weights, const float* x,
                      std::span<float> workspace) const;
  // Time step t of X: updates the state in `workspace` for the active rows.
  void step(const RunContext& ctx, const CellWeights& weights, const float* x, int64_t t, ActiveRows active,
            std::span<float> workspace) const {
    if (c_.plan == CellPlan::kMinimal)
      step_minimal(ctx, weights, x, t, active, workspace);
    else
      step_fused(ctx, weights, t, active, workspace);
  }

  // Gate blocks of W and R multiplied per step (MACs per row and step: that times H*(D+H)).
  virtual int64_t gate_matmuls() const = 0;
  // FLOPs per hidden unit, batch row and step outside the matmuls.
  virtual int64_t elementwise_flops_per_unit() const = 0;
  // The plan's sub-steps in order, and its buffers with their lifetimes in sub-steps:
  // the same form as the arena's buffers, so the cell's plan is drawn like the arena's.
  virtual std::vector<std::string> sub_steps() const = 0;
  virtual std::vector<BufferSpan> buffers() const = 0;

 protected:
  // One step under each plan; the fused one reads step t's rows of the gate inputs.
  virtual void step_minimal(const RunContext& ctx, const CellWeights& weights, const float* x, int64_t t,
                            ActiveRows active, std::span<float> workspace) const = 0;
  virtual void step_fused(const RunContext& ctx, const CellWeights& weights, int64_t t, ActiveRows active,
                          std::span<float> workspace) const = 0;
  GateSpan all_gates() const { return {0, gates_}; }
  // The GEMM's packing scratch, after the state and the plan's scratch.
  std::span<float> gemm_scratch(std::span<float> workspace) const {
    return workspace.subspan(state_floats() + scratch_floats());
  }
  // Where step t's rows start in a [seq, B, width] tensor (layout 0) or a [B, seq, width]
  // one (layout 1), and how far apart they are.
  int64_t step_offset(int64_t t, int64_t width) const { return c_.batch_major ? t * width : t * c_.batch * width; }
  int64_t step_stride(int64_t width) const { return c_.batch_major ? c_.seq_length * width : width; }
  // Clips (under `clip`) then applies sigmoid or tanh to n values.
  void sigmoid(float* y, int64_t n) const;
  void tanh(float* y, int64_t n) const;
  void relu(float* y, int64_t n) const;
  // FLOPs per element (ops/activation.cc) and of a gate input's clip (max, min).
  static int64_t sigmoid_flops();
  static int64_t tanh_flops();
  static int64_t relu_flops();
  int64_t clip_flops() const { return c_.clip ? 2 : 0; }
  // The cell's named buffers within the workspace.
  static BufferSpan buffer(const char* name, int64_t offset, int64_t bytes, int first, int last) {
    return BufferSpan{name, {name}, offset, bytes, first, last};
  }

  CellConfig c_;
  int gates_;
};

}  // namespace minfer
