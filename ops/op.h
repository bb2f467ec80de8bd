// The op/kernel contract (docs/architecture.md). An Op is built once per node from its
// attributes and answers inference, cost and capabilities; binding it to a concrete
// signature, thread count and instruction set yields an immutable Kernel that runs.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "graph/errors.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "ops/activation.h"
#include "ops/kernels/workspace.h"
#include "profiler/cost.h"
#include "profiler/isa.h"

namespace minfer {

// One input of a node as inference and binding see it: its type and, when it is known
// before running (an initializer or a folded value), its data.
struct OpInput {
  TensorType type;
  const Tensor* constant = nullptr;
  bool present = true;  // false for an omitted optional input ("" in the node)

  const Shape& shape() const { return type.shape; }
  DType dtype() const { return type.dtype; }
};

// One output: its inferred type, or not present when the node omits it.
struct OpOutput {
  TensorType type;
  bool present = true;

  const Shape& shape() const { return type.shape; }
};

// What an op can do in the blocked layout NCHWc (ops/blocked_layout.h) on one target, for
// the blocked_layout pass: with lanes 0 it has no NCHWc kernel for the signature.
struct BlockedLayoutSupport {
  int64_t lanes = 0;        // the c of its NCHWc kernel
  bool input = false;       // input 0 may be NCHWc
  bool output = false;      // output 0 may be NCHWc (with residual_input laid out as it)
  bool preferred = false;   // in NCHWc it measured faster than in NCHW (docs/performance.md)
  int residual_input = -1;  // the input that is in output 0's layout (Conv's fused residual), or -1
  // It may read NCHW and write NCHWc (reordering its input itself, as it would anyway or
  // where that moves fewer bytes than reordering its output); else it writes NCHWc only
  // from an NCHWc input.
  bool starts_region = false;
  // Every data input is in output 0's layout (Concat, pools): in NCHWc only with all of
  // them NCHWc.
  bool same_layout = false;
  // Its reading input 0 in NCHWc asks the producer for NCHWc only where every reader of
  // the tensor reads it so (a global pool: a few adds a value, not worth a Reorder for
  // another reader; a 1x1 layer of few channels, as fast in NCHW).
  bool weak_input = false;
};

// A node's inputs with their inferred outputs: what cost and binding work from.
struct OpSignature {
  std::vector<OpInput> inputs;
  std::vector<OpOutput> outputs;
};

// A tensor as a kernel sees it. Views are built once per session, so a run allocates
// nothing. An omitted optional input or output has data == nullptr.
struct TensorView {
  void* data = nullptr;
  TensorType type;

  const Shape& shape() const { return type.shape; }
  int64_t size() const { return num_elements(type.shape); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
  float* f32() const { return as<float>(); }
};

struct RunContext {
  int num_threads = 1;
};

struct BindContext {
  int num_threads = 1;
  Isa isa = active_isa();
};

// What the report shows about a bound kernel besides its cost.
struct KernelFacts {
  // The op's finer class, by what it computes: Conv "regular", "depthwise",
  // "pointwise", "grouped"; empty when the op type says it all.
  std::string op_class;
  // The algorithm, where the user chooses one: ConvTranspose "col2im" or "conv", LSTM
  // "minimal" or "fused"; empty otherwise.
  std::string method;
  // The implementation that runs, with its ISA where it has one: "im2col_gemm", ...
  std::string kernel;
  nlohmann::json details = nlohmann::json::object();  // op-specific facts (an LSTM's state bytes, ...)
  int64_t workspace_bytes = 0;                        // scratch run() needs
  // Scratch each thread of run()'s team needs that stays its own from op to op
  // (Workspace::threads()), a multiple of 64 bytes.
  int64_t thread_scratch_bytes = 0;
  // Output 0 may overwrite this input (the planner decides), where that depends on the
  // kernel bound rather than the op (OpTraits::inplace_input): the kernel reads each of
  // the input's elements before it writes the output's at the same place, and no other.
  int inplace_input = -1;
  // Where each input lies in output 0, in bytes, when every input is one contiguous piece
  // of it (a Concat with nothing but ones before its axis); empty otherwise. The planner
  // may place an input there: its producer then writes it in place, and the kernel skips
  // the copy of an input it finds already there.
  std::vector<int64_t> input_offsets;
};

class Kernel {
 public:
  explicit Kernel(KernelFacts facts) : facts_(std::move(facts)) {}
  virtual ~Kernel() = default;
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  const KernelFacts& facts() const { return facts_; }

  // Computes the outputs from the inputs: allocates nothing, times nothing, does no I/O;
  // const, so one kernel serves concurrent sessions. `workspace` has facts().workspace_bytes.
  virtual void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
                   Workspace workspace) const = 0;

 protected:
  // For constructors that learn their facts as they choose their implementation.
  KernelFacts& mutable_facts() { return facts_; }

 private:
  KernelFacts facts_;
};

// What passes and the planner may rely on about an op, declared by the op instead of
// being spelled out by op type in each pass.
struct OpTraits {
  int inplace_input = -1;          // output 0 may overwrite this input (the planner decides)
  uint32_t optional_outputs = 0;   // bit i: output i may be omitted
  uint32_t shape_only_inputs = 0;  // bit i: only input i's type is read, never its data (Shape)
  uint32_t non_data_inputs = 0;    // bit i: input i is an index, not data (a shape, axes, pads, bounds)
  bool fuses_activation = false;   // runs an activation in its epilogue (fused_activation_attributes)
  bool elementwise = false;        // output i depends on input 0's element i only (Relu, BatchNormalization)
  bool activation = false;         // an activation function: as_activation() gives it
  bool channel_affine = false;     // a per-channel affine (BatchNormalization): channel_affine() gives it
  bool identity = false;           // output 0 is input 0 (Identity, Dropout at inference)

  // Data inputs count in the cost's bytes read and parameters (docs/cost-model.md).
  bool is_data_input(size_t i) const { return i >= 32 || !((shape_only_inputs | non_data_inputs) >> i & 1u); }
};

// y[n, c, ...] = x[n, c, ...] * scale[c] + shift[c]: what BatchNormalization computes
// at inference, and what an op with weights may fold into them.
struct ChannelAffine {
  std::vector<double> scale, shift;
};

// An op's new constant weights (input 1) and bias (input 2) with a ChannelAffine folded
// in, and its new attributes where they change too (Gemm's beta).
struct FoldedAffine {
  Tensor weights, bias;
  std::optional<Attributes> attributes;
};

class Op {
 public:
  virtual ~Op() = default;

  virtual OpTraits traits() const { return {}; }

  // Output types from input types (and constant input data). Pure. Throws OpError for
  // inputs the op cannot take, UnsupportedError for valid ones it does not implement.
  virtual std::vector<TensorType> infer(std::span<const OpInput> in) const = 0;

  // The analytic cost by docs/cost-model.md, with its formulas. Pure and exact.
  virtual OpCost cost(const OpSignature& sig) const = 0;

  // The kernel for this signature, thread count and ISA, with everything it derives
  // once (geometry, packed weights, micro-kernel, workspace size).
  virtual std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const = 0;

  // The per-channel affine this op computes, when it is one with constant parameters
  // (BatchNormalization); nullopt otherwise.
  virtual std::optional<ChannelAffine> channel_affine(const OpSignature& /*sig*/) const { return std::nullopt; }

  // For ops whose output channels a following channel affine can fold into (Conv,
  // ConvTranspose, Gemm): the weights and bias that compute it, or why they cannot.
  struct AffineFold {
    std::optional<FoldedAffine> folded;
    std::string blocker;  // why not, when folded is empty
  };
  virtual AffineFold fold_channel_affine(const OpSignature& /*sig*/, const ChannelAffine& /*affine*/) const {
    return {std::nullopt, "it has no weights to fold a channel scale into"};
  }

  // The activation this op is, in the form an epilogue runs (fuse_activations), when
  // it is one whose parameters are known (Clip's bounds constant); nullopt otherwise.
  virtual std::optional<Activation> as_activation(const OpSignature& /*sig*/) const { return std::nullopt; }

  // What the op can do in the blocked layout on `isa` for this signature (a node in
  // NCHWc has the attributes of ops/blocked_layout.h).
  virtual BlockedLayoutSupport blocked_layout(const OpSignature& /*sig*/, Isa /*isa*/) const { return {}; }

  // Whether output 0 is input 0 for this signature: always when traits().identity, and
  // for ops that copy only with some constant inputs (Pad with all pads zero).
  virtual bool is_identity(const OpSignature& /*sig*/) const { return traits().identity; }
};

// Creates the op for a node (parsing and checking its attributes); throws
// UnsupportedError for an unknown op type, OpError for a bad attribute.
std::unique_ptr<Op> create_op(const Node& node);
bool is_known_op(const std::string& op_type);
std::vector<std::string> known_ops();

}  // namespace minfer
