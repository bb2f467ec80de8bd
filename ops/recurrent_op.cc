#include "ops/recurrent_op.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <optional>

#include "ops/kernels/gemm.h"
#include "ops/kernels/vector_activations.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

// ONNX's inputs and outputs; state i (H, then the LSTM's C) is initialised from input
// kInitialH + i and written to output kYh + i.
enum Input : size_t { kX = 0, kW, kR, kB, kSequenceLens, kInitialH, kInitialC, kP };
enum Output : size_t { kY = 0, kYh, kYc };

struct Geometry {
  int64_t seq = 0, batch = 0, input_size = 0, hidden = 0, directions = 1;
  bool batch_major = false;  // layout 1
  bool has_bias = false, has_lengths = false, has_peephole = false;
  bool has_initial[2] = {false, false};  // initial_h, initial_c
  bool weights_constant = false;         // W and R are initializers: packed when the op binds
};

bool present(std::span<const OpInput> in, size_t index) {
  return index < in.size() && in[index].present;
}

void expect_shape(std::span<const OpInput> in, size_t index, const char* name, const Shape& want,
                  const std::string& layout) {
  if (in[index].shape() != want)
    throw OpError(
        fmt::format("{} has shape {}, expected {} ({})", name, shape_str(in[index].shape()), shape_str(want), layout));
}

// ONNX leaves lengths past seq_length undefined and gives zero lengths no meaning for
// Y_h; both are refused. Runs at compile time for constants, else on every run.
template <typename T>
void check_lengths(const T* lengths, int64_t batch, int64_t seq) {
  for (int64_t b = 0; b < batch; ++b) {
    const double v = static_cast<double>(lengths[b]);
    if (!(v >= 1.0 && v <= static_cast<double>(seq)) || v != std::trunc(v))
      throw OpError(fmt::format("sequence_lens[{}] is {}; lengths must be integers in [1, {}]", b, v, seq));
  }
}

void check_lengths(DType dtype, const void* lengths, int64_t batch, int64_t seq) {
  if (dtype == DType::kInt64)
    check_lengths(static_cast<const int64_t*>(lengths), batch, seq);
  else
    check_lengths(static_cast<const float*>(lengths), batch, seq);
}

bool same_name(const std::string& a, const char* b) {
  return std::equal(a.begin(), a.end(), b, b + std::strlen(b),
                    [](char x, char y) { return std::tolower(static_cast<unsigned char>(x)) == std::tolower(y); });
}

// The attributes that fix how the cell runs, parsed once from the node.
struct Params {
  int64_t directions = 1, hidden_size = 0;  // hidden_size 0: taken from R
  bool reverse = false;                     // direction "reverse"
  std::optional<CellPlan> plan;             // the attribute "plan"; nullopt: "auto"
  CellConfig cell;                          // layout, clip and the op's flag; the rest from the inputs
};

// "auto" runs the fused plan where its gate inputs (seq x batch x gates x H floats) take
// at most this, else the minimal one: one GEMM per step instead of one per gate and
// operand, and the input products of all steps in one (the BiLSTM of bench/compare_ort.py,
// 30 KiB of gate inputs: 0.70x the minimal plan's time), without letting a long sequence
// or a large batch hold megabytes the minimal plan's few B x H buffers do without.
constexpr int64_t kAutoFusedBytes = int64_t{1} << 20;

// The kernels are null for a cell that only counts (cost).
CellConfig cell_config(const RecurrentKind& kind, const Params& p, const Geometry& g, const kernels::GemmKernel* gemm,
                       const kernels::VectorActivations* activations) {
  CellConfig c = p.cell;
  c.seq_length = g.seq;
  c.batch = g.batch;
  c.input_size = g.input_size;
  c.hidden_size = g.hidden;
  c.has_bias = g.has_bias;
  c.has_peephole = g.has_peephole;
  c.weights_packed = g.weights_constant;
  c.gemm = gemm;
  c.activations = activations;
  c.plan = p.plan.value_or(CellPlan::kFused);
  if (!p.plan && checked_mul({4, kind.make_cell(c)->scratch_floats()}) > kAutoFusedBytes) c.plan = CellPlan::kMinimal;
  return c;
}

class RecurrentKernel final : public Kernel {
 public:
  RecurrentKernel(const RecurrentKind& kind, const Params& p, const Geometry& g, const OpSignature& sig, Isa isa,
                  int threads)
      : Kernel({}),
        kind_(kind),
        p_(p),
        g_(g),
        gemm_(&kernels::gemm_kernel(isa)),
        cell_(kind.make_cell(cell_config(kind, p, g, gemm_, kernels::vector_activations_for(isa)))) {
    const kernels::GemmKernel& gemm = *gemm_;
    const std::vector<GateSpan> w_blocks = cell_->input_blocks(), r_blocks = cell_->recurrent_blocks();
    if (g.weights_constant) {
      const int64_t rows = kind.gates * g.hidden;
      const float* w = sig.inputs[kW].constant->values<float>().data();
      const float* r = sig.inputs[kR].constant->values<float>().data();
      for (int64_t d = 0; d < g.directions; ++d)
        packed_.push_back(GateWeights::packed(gemm, w + d * rows * g.input_size, r + d * rows * g.hidden, g.input_size,
                                              g.hidden, w_blocks, r_blocks));
    }
    const RecurrentCell& cell = *cell_;
    const char* plan = cell_plan_name(cell_->config().plan);
    KernelFacts& f = mutable_facts();
    f.method = plan;
    f.kernel = fmt::format("{}_{}", kind.op_type, plan);
    std::transform(f.kernel.begin(), f.kernel.end(), f.kernel.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // A bidirectional layer with two threads or more runs its directions side by side,
    // one thread each: two chains of small products with no step to wait on each other,
    // where one direction's products on two threads met at every product (a batch-1
    // LSTM's are too small to split at all). Each then has its own workspace.
    parallel_directions_ = g.directions == 2 && threads >= 2;
    direction_floats_ = cell.workspace_floats(parallel_directions_ ? 1 : threads);
    // The cell's state, scratch and GEMM packing scratch, per direction run at once.
    f.workspace_bytes = checked_mul({4, parallel_directions_ ? 2 : 1, direction_floats_});
    nlohmann::json buffers = nlohmann::json::array();
    for (const BufferSpan& b : cell.buffers())
      buffers.push_back({{"name", b.name},
                         {"offset", b.offset},
                         {"bytes", b.bytes},
                         {"first_step", b.first_step},
                         {"last_step", b.last_step}});
    f.details = {
        {"plan", plan},
        {"plan_chosen_by", p.plan ? "attribute" : "auto"},
        {"directions", g.directions},
        {"seq_length", g.seq},
        {"batch", g.batch},
        {"input_size", g.input_size},
        {"hidden_size", g.hidden},
        {"cell_macs", checked_mul({cell.gate_matmuls(), g.hidden, g.input_size + g.hidden})},
        {"cell_elementwise_flops", checked_mul({cell.elementwise_flops_per_unit(), g.hidden})},
        {"state_bytes", checked_mul({4, cell.state_floats()})},
        {"scratch_bytes", checked_mul({4, cell.scratch_floats()})},
        {"gemm_scratch_bytes_per_thread", 4 * cell.gemm_scratch_floats(1)},
        {"gemm_kernel", gemm.name},
        {"activation_kernel", cell.config().activations->name},
        {"prepacked", g.weights_constant},
        {"packed_weight_bytes",
         g.weights_constant
             ? checked_mul({g.directions, GateWeights::packed_bytes(gemm, g.input_size, g.hidden, w_blocks, r_blocks)})
             : 0},
        {"cell_steps", cell.sub_steps()},
        {"cell_buffers", buffers}};
    if (parallel_directions_) {
      f.details["directions_in_parallel"] = true;
      f.details["direction_workspace_bytes"] = checked_mul({4, direction_floats_});
    }
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           Workspace ws) const override {
    const Geometry& g = g_;
    ws.require(facts().workspace_bytes, kind_.op_type);
    const TensorView* lengths = g.has_lengths ? &in[kSequenceLens] : nullptr;
    if (lengths) check_lengths(lengths->type.dtype, lengths->data, g.batch, g.seq);
    if (!parallel_directions_) {
      for (int64_t d = 0; d < g.directions; ++d) run_direction(ctx, in, out, d, ws.floats());
      return;
    }
    const RunContext one{1};
    const std::span<float> workspace = ws.floats();
    const auto d_floats = static_cast<size_t>(direction_floats_);
    // The runtime may grant one thread: the loop still runs both directions.
#pragma omp parallel num_threads(2)
    for (int d = omp_get_thread_num(); d < 2; d += omp_get_num_threads())
      run_direction(one, in, out, d, workspace.subspan(static_cast<size_t>(d) * d_floats, d_floats));
  }

 private:
  // Direction d over the whole sequence, in its own workspace: Y's rows of the direction,
  // its final states.
  void run_direction(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out, int64_t d,
                     std::span<float> workspace) const {
    const Geometry& g = g_;
    const RecurrentCell& cell = *cell_;
    const TensorView* lengths = g.has_lengths ? &in[kSequenceLens] : nullptr;
    auto output = [&](size_t index) { return index < out.size() ? out[index].f32() : nullptr; };
    float* y = output(kY);
    const float* hidden_state = cell.state(workspace.data(), 0);
    // Where batch row b of direction d sits in a [dirs, batch, H] state tensor, or in a
    // [batch, dirs, H] one for layout 1; and Y's row for step t.
    auto state_row = [&](int64_t b) { return (g.batch_major ? b * g.directions + d : d * g.batch + b) * g.hidden; };
    auto y_row = [&](int64_t t, int64_t b) {
      return (g.batch_major ? (b * g.seq + t) * g.directions + d : (t * g.directions + d) * g.batch + b) * g.hidden;
    };
    const bool reverse = p_.reverse || d == 1;  // bidirectional: direction 1 runs backwards
    GateWeights plain;
    const CellWeights weights = cell_weights(in, d, plain);
    cell.project_inputs(ctx, weights, in[kX].f32(), workspace);
    for (int i = 0; i < cell.states(); ++i) {
      float* state = cell.state(workspace.data(), i);
      if (!g.has_initial[i]) {
        std::fill_n(state, g.batch * g.hidden, 0.0f);
        continue;
      }
      const float* initial = in[kInitialH + i].f32();
      for (int64_t b = 0; b < g.batch; ++b) std::copy_n(initial + state_row(b), g.hidden, state + b * g.hidden);
    }
    // Reverse runs t = seq-1 .. 0; a row shorter than seq stays at its initial state
    // until t reaches its last element, so each row starts from its own end (ONNX).
    for (int64_t step = 0; step < g.seq; ++step) {
      const int64_t t = reverse ? g.seq - 1 - step : step;
      const ActiveRows active{lengths, t};
      cell.step(ctx, weights, in[kX].f32(), t, active, workspace);
      if (!y) continue;
      for (int64_t b = 0; b < g.batch; ++b) {
        float* row = y + y_row(t, b);
        if (active(b))
          std::copy_n(hidden_state + b * g.hidden, g.hidden, row);
        else
          std::fill_n(row, g.hidden, 0.0f);
      }
    }
    for (int i = 0; i < cell.states(); ++i) {
      float* final_state = output(kYh + i);
      if (!final_state) continue;
      const float* state = cell.state(workspace.data(), i);
      for (int64_t b = 0; b < g.batch; ++b) std::copy_n(state + b * g.hidden, g.hidden, final_state + state_row(b));
    }
  }

  // Direction d's operands; `plain` holds W and R's views when they are graph inputs.
  CellWeights cell_weights(std::span<const TensorView> in, int64_t d, GateWeights& plain) const {
    const Geometry& g = g_;
    const int64_t rows = kind_.gates * g.hidden;
    CellWeights w;
    if (g.weights_constant) {
      w.gates = &packed_[d];
    } else {
      plain = GateWeights::plain(*gemm_, in[kW].f32() + d * rows * g.input_size, in[kR].f32() + d * rows * g.hidden,
                                 g.input_size, g.hidden);
      w.gates = &plain;
    }
    if (g.has_bias) w.bias = in[kB].f32() + d * 2 * rows;
    if (g.has_peephole) w.peephole = in[kP].f32() + d * 3 * g.hidden;
    return w;
  }

  const RecurrentKind& kind_;
  const Params p_;
  const Geometry g_;
  const kernels::GemmKernel* gemm_;
  const std::unique_ptr<const RecurrentCell> cell_;
  std::vector<GateWeights> packed_;   // per direction, when W and R are constants
  bool parallel_directions_ = false;  // both directions at once, one thread each
  int64_t direction_floats_ = 0;      // one direction's workspace
};

class RecurrentOp final : public Op {
 public:
  RecurrentOp(const RecurrentKind& kind, const Node& node) : kind_(kind) {
    // The op's own flag in the list, or a repeat of "plan" for an op without one.
    node.attrs.check_known({"hidden_size", "direction", "activations", "clip", "layout", "plan",
                            kind.flag_name ? kind.flag_name : "plan"});
    const std::string direction = node.attrs.get_string("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      throw OpError(fmt::format("attribute 'direction' must be forward, reverse or bidirectional, got \"{}\"",
                                excerpt(direction)));
    p_.directions = direction == "bidirectional" ? 2 : 1;
    p_.reverse = direction == "reverse";
    p_.hidden_size = node.attrs.get_int("hidden_size", 0);
    if (node.attrs.has("hidden_size") && p_.hidden_size <= 0)
      throw OpError(fmt::format("attribute 'hidden_size' must be positive, got {}", p_.hidden_size));
    const std::vector<std::string> acts = node.attrs.get_strings("activations");
    const size_t per_direction = kind.activations.size();
    const bool one_per_direction = acts.size() == per_direction * static_cast<size_t>(p_.directions);
    bool defaults = acts.empty() || one_per_direction;
    for (size_t i = 0; defaults && i < acts.size(); ++i)
      defaults = same_name(acts[i], kind.activations[i % per_direction]);
    p_.cell.relu =
        !defaults && kind.relu_activation && per_direction == 1 && one_per_direction &&
        std::all_of(acts.begin(), acts.end(), [&](const std::string& a) { return same_name(a, kind.relu_activation); });
    if (!defaults && !p_.cell.relu)
      throw UnsupportedError(fmt::format("activations [{}]: only the default {}{} (per direction) is implemented",
                                         excerpt(fmt::format("{}", fmt::join(acts, ", "))),
                                         fmt::join(kind.activations, ", "),
                                         kind.relu_activation ? fmt::format(" or {}", kind.relu_activation) : ""));
    if (node.attrs.has("clip")) {
      const double clip = node.attrs.get_float("clip", 0.0);
      if (!(clip > 0.0)) throw OpError(fmt::format("attribute 'clip' must be positive, got {}", clip));
      p_.cell.clip = static_cast<float>(clip);
    }
    if (kind.flag_name) {
      const int64_t flag = node.attrs.get_int(kind.flag_name, 0);
      if (flag != 0 && flag != 1)
        throw OpError(fmt::format("attribute '{}' must be 0 or 1, got {}", kind.flag_name, flag));
      p_.cell.*kind.flag = flag == 1;
    }
    const int64_t layout = node.attrs.get_int("layout", 0);
    if (layout != 0 && layout != 1) throw OpError(fmt::format("attribute 'layout' must be 0 or 1, got {}", layout));
    p_.cell.batch_major = layout == 1;
    p_.plan = parse_cell_plan(node.attrs.get_string("plan", "auto"));
  }

  OpTraits traits() const override {
    OpTraits t;
    t.optional_outputs = kind_.cell_state ? 0b111 : 0b11;
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const Geometry g = geometry(in);
    const Shape y =
        g.batch_major ? Shape{g.batch, g.seq, g.directions, g.hidden} : Shape{g.seq, g.directions, g.batch, g.hidden};
    const Shape state = g.batch_major ? Shape{g.batch, g.directions, g.hidden} : Shape{g.directions, g.batch, g.hidden};
    std::vector<TensorType> out = {{DType::kFloat32, y}, {DType::kFloat32, state}};
    if (kind_.cell_state) out.push_back({DType::kFloat32, state});
    return out;
  }

  OpCost cost(const OpSignature& sig) const override {
    const Geometry g = geometry(sig.inputs);
    const std::unique_ptr<RecurrentCell> cell = kind_.make_cell(cell_config(kind_, p_, g, nullptr, nullptr));
    // Every row is counted for every step: sequence_lens may be known only at run
    // time, and the gate matmuls run on the whole batch anyway.
    const CostExpr row_steps =
        CostExpr::of("seq", g.seq) * CostExpr::of("batch", g.batch) * CostExpr::of("directions", g.directions);
    const CostExpr macs = row_steps * CostExpr::of("gate matmuls", cell->gate_matmuls()) * CostExpr::of("H", g.hidden) *
                          (CostExpr::of("D", g.input_size) + CostExpr::of("H", g.hidden));
    const CostExpr flops = CostExpr(2) * macs + row_steps * CostExpr::of("H", g.hidden) *
                                                    CostExpr::of("cell FLOPs/unit", cell->elementwise_flops_per_unit());
    return op_cost(*this, sig, macs, flops);
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    return std::make_unique<RecurrentKernel>(kind_, p_, geometry(sig.inputs), sig, ctx.isa, ctx.num_threads);
  }

 private:
  Geometry geometry(std::span<const OpInput> in) const {
    check_input_count(in, 3, kind_.cell_state ? 8 : 6);
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i].present && in[i].dtype() != (i == kSequenceLens ? in[i].dtype() : DType::kFloat32))
        throw UnsupportedError(
            fmt::format("input {} is {}; {} computes on float32", i, dtype_name(in[i].dtype()), kind_.op_type));
    if (present(in, kSequenceLens) && in[kSequenceLens].dtype() == DType::kBool)
      throw OpError("sequence_lens must hold integers");
    const bool batch_major = p_.cell.batch_major;
    const std::string gate_rows = kind_.gates == 1 ? "hidden" : fmt::format("{}*hidden", kind_.gates);
    const Shape& x = in[kX].shape();
    const Shape& r = in[kR].shape();
    if (x.size() != 3)
      throw OpError(fmt::format("X has shape {}, expected rank 3 {}", shape_str(x),
                                batch_major ? "[batch, seq, input] (layout 1)" : "[seq, batch, input]"));
    if (r.size() != 3)
      throw OpError(fmt::format("R has shape {}, expected rank 3 [directions, {}, hidden]", shape_str(r), gate_rows));
    Geometry g;
    g.batch_major = batch_major;
    g.seq = x[batch_major ? 1 : 0];
    g.batch = x[batch_major ? 0 : 1];
    g.input_size = x[2];
    g.directions = p_.directions;
    g.hidden = p_.hidden_size > 0 ? p_.hidden_size : r[2];
    if (r[2] != g.hidden)
      throw OpError(
          fmt::format("attribute 'hidden_size' is {} but R {} has hidden size {}", g.hidden, shape_str(r), r[2]));
    // R's dims fit int64, but gates * hidden need not: such a hidden size is refused here.
    const int64_t dirs = g.directions, hidden = g.hidden, rows = checked_mul({kind_.gates, hidden});
    expect_shape(in, kW, "W", {dirs, rows, g.input_size}, fmt::format("[directions, {}, input]", gate_rows));
    expect_shape(in, kR, "R", {dirs, rows, hidden}, fmt::format("[directions, {}, hidden]", gate_rows));
    g.weights_constant = in[kW].constant && in[kR].constant;
    g.has_bias = present(in, kB);
    if (g.has_bias)
      expect_shape(in, kB, "B", {dirs, checked_mul({2, rows})},
                   fmt::format("[directions, {}*hidden]", 2 * kind_.gates));
    g.has_lengths = present(in, kSequenceLens);
    if (g.has_lengths) {
      expect_shape(in, kSequenceLens, "sequence_lens", {g.batch}, "[batch]");
      if (const Tensor* t = in[kSequenceLens].constant) check_lengths(t->dtype(), t->data(), g.batch, g.seq);
    }
    const Shape state = batch_major ? Shape{g.batch, dirs, hidden} : Shape{dirs, g.batch, hidden};
    const char* state_layout = batch_major ? "[batch, directions, hidden] (layout 1)" : "[directions, batch, hidden]";
    const char* state_names[] = {"initial_h", "initial_c"};
    for (int i = 0; i < (kind_.cell_state ? 2 : 1); ++i) {
      g.has_initial[i] = present(in, kInitialH + i);
      if (g.has_initial[i]) expect_shape(in, kInitialH + i, state_names[i], state, state_layout);
    }
    g.has_peephole = present(in, kP);
    if (g.has_peephole) expect_shape(in, kP, "P", {dirs, checked_mul({3, hidden})}, "[directions, 3*hidden]");
    return g;
  }

  const RecurrentKind& kind_;
  Params p_;
};

}  // namespace

std::unique_ptr<Op> make_recurrent_op(const RecurrentKind& kind, const Node& node) {
  return std::make_unique<RecurrentOp>(kind, node);
}

}  // namespace minfer
