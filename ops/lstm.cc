// LSTM (ONNX opset 14): forward, reverse or bidirectional over X [seq, batch, input]
// (layout 0; layout 1 is batch-major, [batch, seq, input]), one LstmCell step per time
// step and direction. Outputs Y [seq, dirs, batch, hidden], Y_h and Y_c [dirs, batch,
// hidden] (layout 1: [batch, seq, dirs, hidden] and [batch, dirs, hidden]), each
// optional. The cell's memory plan is the engine attribute "plan" ("minimal" or
// "fused"); its state, scratch and GEMM packing scratch are the step's workspace.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "ops/kernels/gemm.h"
#include "ops/kernels/vector_activations.h"
#include "ops/lstm_cell.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

enum Input : size_t { kX = 0, kW, kR, kB, kSequenceLens, kInitialH, kInitialC, kP };
enum Output : size_t { kY = 0, kYh, kYc };

struct LstmGeometry {
  int64_t seq = 0, batch = 0, input_size = 0, hidden = 0, directions = 1;
  bool batch_major = false;  // layout 1
  bool has_bias = false, has_lengths = false, has_initial_h = false, has_initial_c = false, has_peephole = false;
  bool weights_constant = false;  // W and R are initializers: packed when the op binds
};

bool present(std::span<const OpInput> in, size_t index) {
  return index < in.size() && in[index].present;
}

void expect_shape(std::span<const OpInput> in, size_t index, const char* name, const Shape& want, const char* layout) {
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
struct LstmParams {
  int64_t directions = 1, hidden_size = 0;  // hidden_size 0: taken from R
  bool reverse = false;                     // direction "reverse"
  bool batch_major = false;                 // layout 1
  bool input_forget = false;
  std::optional<float> clip;
  LstmPlan plan = LstmPlan::kMinimal;
};

// The kernels are null for a cell that only counts (cost).
LstmCellConfig cell_config(const LstmParams& p, const LstmGeometry& g, const kernels::GemmKernel* gemm,
                           const kernels::VectorActivations* activations) {
  LstmCellConfig c;
  c.plan = p.plan;
  c.seq_length = g.seq;
  c.batch = g.batch;
  c.input_size = g.input_size;
  c.hidden_size = g.hidden;
  c.batch_major = g.batch_major;
  c.has_bias = g.has_bias;
  c.has_peephole = g.has_peephole;
  c.input_forget = p.input_forget;
  c.weights_packed = g.weights_constant;
  c.clip = p.clip;
  c.gemm = gemm;
  c.activations = activations;
  return c;
}

class LstmKernel final : public Kernel {
 public:
  LstmKernel(const LstmParams& p, const LstmGeometry& g, const OpSignature& sig, Isa isa, int threads)
      : Kernel({}),
        p_(p),
        g_(g),
        gemm_(&kernels::gemm_kernel(isa)),
        cell_(cell_config(p, g, gemm_, kernels::vector_activations_for(isa))) {
    const kernels::GemmKernel& gemm = *gemm_;
    if (g.weights_constant) {
      const int64_t rows = 4 * g.hidden;
      const float* w = sig.inputs[kW].constant->values<float>().data();
      const float* r = sig.inputs[kR].constant->values<float>().data();
      for (int64_t d = 0; d < g.directions; ++d)
        packed_.push_back(GateWeights::packed(gemm, w + d * rows * g.input_size, r + d * rows * g.hidden, g.input_size,
                                              g.hidden, p.plan == LstmPlan::kMinimal));
    }
    KernelFacts& f = mutable_facts();
    f.method = lstm_plan_name(p.plan);
    f.kernel = std::string("lstm_") + lstm_plan_name(p.plan);
    f.workspace_bytes =
        checked_mul({4, cell_.workspace_floats(threads)});  // the cell's state, scratch and GEMM packing scratch
    nlohmann::json buffers = nlohmann::json::array();
    for (const BufferSpan& b : cell_.buffers())
      buffers.push_back({{"name", b.name},
                         {"offset", b.offset},
                         {"bytes", b.bytes},
                         {"first_step", b.first_step},
                         {"last_step", b.last_step}});
    f.details = {
        {"plan", lstm_plan_name(p.plan)},
        {"directions", g.directions},
        {"seq_length", g.seq},
        {"batch", g.batch},
        {"input_size", g.input_size},
        {"hidden_size", g.hidden},
        {"cell_macs", checked_mul({cell_.gate_matmuls(), g.hidden, g.input_size + g.hidden})},
        {"cell_elementwise_flops", checked_mul({cell_.elementwise_flops_per_unit(), g.hidden})},
        {"state_bytes", checked_mul({4, cell_.state_floats()})},
        {"scratch_bytes", checked_mul({4, cell_.scratch_floats()})},
        {"gemm_scratch_bytes_per_thread", 4 * cell_.gemm_scratch_floats(1)},
        {"gemm_kernel", gemm.name},
        {"activation_kernel", cell_.config().activations->name},
        {"prepacked", g.weights_constant},
        {"packed_weight_bytes",
         g.weights_constant ? checked_mul({g.directions, GateWeights::packed_bytes(gemm, g.input_size, g.hidden,
                                                                                   p.plan == LstmPlan::kMinimal)})
                            : 0},
        {"cell_steps", cell_.sub_steps()},
        {"cell_buffers", buffers}};
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           Workspace ws) const override {
    const LstmGeometry& g = g_;
    const LstmCell& cell = cell_;
    ws.require(facts().workspace_bytes, "LSTM");
    const std::span<float> workspace = ws.floats();
    const TensorView* lengths = g.has_lengths ? &in[kSequenceLens] : nullptr;
    if (lengths) check_lengths(lengths->type.dtype, lengths->data, g.batch, g.seq);
    auto output = [&](size_t index) { return index < out.size() ? out[index].f32() : nullptr; };
    float* y = output(kY);
    float* y_h = output(kYh);
    float* y_c = output(kYc);
    const int64_t bh = g.batch * g.hidden;
    float* cell_state = cell.cell_state(workspace.data());
    float* hidden_state = cell.hidden_state(workspace.data());
    // Where batch row b of direction d sits in a [dirs, batch, H] state tensor, or in a
    // [batch, dirs, H] one for layout 1; and Y's row for step t.
    auto state_row = [&](int64_t d, int64_t b) {
      return (g.batch_major ? b * g.directions + d : d * g.batch + b) * g.hidden;
    };
    auto y_row = [&](int64_t t, int64_t d, int64_t b) {
      return (g.batch_major ? (b * g.seq + t) * g.directions + d : (t * g.directions + d) * g.batch + b) * g.hidden;
    };
    auto copy_state = [&](const float* from, int64_t d, float* to) {
      for (int64_t b = 0; b < g.batch; ++b) std::copy_n(from + state_row(d, b), g.hidden, to + b * g.hidden);
    };
    auto store_state = [&](const float* from, int64_t d, float* to) {
      for (int64_t b = 0; b < g.batch; ++b) std::copy_n(from + b * g.hidden, g.hidden, to + state_row(d, b));
    };

    for (int64_t d = 0; d < g.directions; ++d) {
      const bool reverse = p_.reverse || d == 1;  // bidirectional: direction 1 runs backwards
      GateWeights plain;
      const LstmCellWeights weights = cell_weights(in, d, plain);
      cell.project_inputs(ctx, weights, in[kX].f32(), workspace);
      if (g.has_initial_c)
        copy_state(in[kInitialC].f32(), d, cell_state);
      else
        std::fill_n(cell_state, bh, 0.0f);
      if (g.has_initial_h)
        copy_state(in[kInitialH].f32(), d, hidden_state);
      else
        std::fill_n(hidden_state, bh, 0.0f);
      // Reverse runs t = seq-1 .. 0; a row shorter than seq stays at its initial state
      // until t reaches its last element, so each row starts from its own end (ONNX).
      for (int64_t step = 0; step < g.seq; ++step) {
        const int64_t t = reverse ? g.seq - 1 - step : step;
        const ActiveRows active{lengths, t};
        cell.step(ctx, weights, in[kX].f32(), t, active, workspace);
        if (!y) continue;
        for (int64_t b = 0; b < g.batch; ++b) {
          float* row = y + y_row(t, d, b);
          if (active(b))
            std::copy_n(hidden_state + b * g.hidden, g.hidden, row);
          else
            std::fill_n(row, g.hidden, 0.0f);
        }
      }
      if (y_h) store_state(hidden_state, d, y_h);
      if (y_c) store_state(cell_state, d, y_c);
    }
  }

 private:
  // Direction d's operands; `plain` holds W and R's views when they are graph inputs.
  LstmCellWeights cell_weights(std::span<const TensorView> in, int64_t d, GateWeights& plain) const {
    const LstmGeometry& g = g_;
    const int64_t rows = 4 * g.hidden;
    LstmCellWeights w;
    if (g.weights_constant) {
      w.gates = &packed_[d];
    } else {
      plain = GateWeights::plain(*gemm_, in[kW].f32() + d * rows * g.input_size, in[kR].f32() + d * rows * g.hidden,
                                 g.input_size, g.hidden);
      w.gates = &plain;
    }
    if (g.has_bias) w.bias = in[kB].f32() + d * 8 * g.hidden;
    if (g.has_peephole) w.peephole = in[kP].f32() + d * 3 * g.hidden;
    return w;
  }

  const LstmParams p_;
  const LstmGeometry g_;
  const kernels::GemmKernel* gemm_;
  const LstmCell cell_;
  std::vector<GateWeights> packed_;  // per direction, when W and R are constants
};

class LstmOp final : public Op {
 public:
  explicit LstmOp(const Node& node) {
    node.attrs.check_known({"hidden_size", "direction", "activations", "clip", "input_forget", "layout", "plan"});
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
    bool defaults = acts.empty() || acts.size() == static_cast<size_t>(3 * p_.directions);
    for (size_t i = 0; defaults && i < acts.size(); ++i) defaults = same_name(acts[i], i % 3 == 0 ? "Sigmoid" : "Tanh");
    if (!defaults)
      throw UnsupportedError(
          fmt::format("activations [{}]: only the default Sigmoid, Tanh, Tanh (per direction) is implemented",
                      excerpt(fmt::format("{}", fmt::join(acts, ", ")))));
    if (node.attrs.has("clip")) {
      const double clip = node.attrs.get_float("clip", 0.0);
      if (!(clip > 0.0)) throw OpError(fmt::format("attribute 'clip' must be positive, got {}", clip));
      p_.clip = static_cast<float>(clip);
    }
    const int64_t input_forget = node.attrs.get_int("input_forget", 0);
    if (input_forget != 0 && input_forget != 1)
      throw OpError(fmt::format("attribute 'input_forget' must be 0 or 1, got {}", input_forget));
    p_.input_forget = input_forget == 1;
    const int64_t layout = node.attrs.get_int("layout", 0);
    if (layout != 0 && layout != 1) throw OpError(fmt::format("attribute 'layout' must be 0 or 1, got {}", layout));
    p_.batch_major = layout == 1;
    p_.plan = parse_lstm_plan(node.attrs.get_string("plan", "minimal"));
  }

  OpTraits traits() const override {
    OpTraits t;
    t.optional_outputs = 0b111;
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const LstmGeometry g = geometry(in);
    if (g.batch_major) {
      const Shape state{g.batch, g.directions, g.hidden};
      return {{DType::kFloat32, {g.batch, g.seq, g.directions, g.hidden}},
              {DType::kFloat32, state},
              {DType::kFloat32, state}};
    }
    const Shape state{g.directions, g.batch, g.hidden};
    return {{DType::kFloat32, {g.seq, g.directions, g.batch, g.hidden}},
            {DType::kFloat32, state},
            {DType::kFloat32, state}};
  }

  OpCost cost(const OpSignature& sig) const override {
    const LstmGeometry g = geometry(sig.inputs);
    const LstmCell cell(cell_config(p_, g, nullptr, nullptr));
    // Every row is counted for every step: sequence_lens may be known only at run
    // time, and the gate matmuls run on the whole batch anyway.
    const CostExpr row_steps =
        CostExpr::of("seq", g.seq) * CostExpr::of("batch", g.batch) * CostExpr::of("directions", g.directions);
    const CostExpr macs = row_steps * CostExpr::of("gate matmuls", cell.gate_matmuls()) * CostExpr::of("H", g.hidden) *
                          (CostExpr::of("D", g.input_size) + CostExpr::of("H", g.hidden));
    const CostExpr flops = CostExpr(2) * macs + row_steps * CostExpr::of("H", g.hidden) *
                                                    CostExpr::of("cell FLOPs/unit", cell.elementwise_flops_per_unit());
    return op_cost(*this, sig, macs, flops);
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    return std::make_unique<LstmKernel>(p_, geometry(sig.inputs), sig, ctx.isa, ctx.num_threads);
  }

 private:
  LstmGeometry geometry(std::span<const OpInput> in) const {
    check_input_count(in, 3, 8);
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i].present && in[i].dtype() != (i == kSequenceLens ? in[i].dtype() : DType::kFloat32))
        throw UnsupportedError(fmt::format("input {} is {}; LSTM computes on float32", i, dtype_name(in[i].dtype())));
    if (present(in, kSequenceLens) && in[kSequenceLens].dtype() == DType::kBool)
      throw OpError("sequence_lens must hold integers");
    const Shape& x = in[kX].shape();
    const Shape& r = in[kR].shape();
    if (x.size() != 3)
      throw OpError(fmt::format("X has shape {}, expected rank 3 {}", shape_str(x),
                                p_.batch_major ? "[batch, seq, input] (layout 1)" : "[seq, batch, input]"));
    if (r.size() != 3)
      throw OpError(fmt::format("R has shape {}, expected rank 3 [directions, 4*hidden, hidden]", shape_str(r)));
    LstmGeometry g;
    g.batch_major = p_.batch_major;
    g.seq = x[p_.batch_major ? 1 : 0];
    g.batch = x[p_.batch_major ? 0 : 1];
    g.input_size = x[2];
    g.directions = p_.directions;
    g.hidden = p_.hidden_size > 0 ? p_.hidden_size : r[2];
    if (r[2] != g.hidden)
      throw OpError(
          fmt::format("attribute 'hidden_size' is {} but R {} has hidden size {}", g.hidden, shape_str(r), r[2]));
    // R's dims fit int64, but 4 * hidden need not: a hidden size past 2^61 is refused here.
    const int64_t dirs = g.directions, hidden = g.hidden, gates = checked_mul({4, hidden});
    expect_shape(in, kW, "W", {dirs, gates, g.input_size}, "[directions, 4*hidden, input]");
    expect_shape(in, kR, "R", {dirs, gates, hidden}, "[directions, 4*hidden, hidden]");
    g.weights_constant = in[kW].constant && in[kR].constant;
    g.has_bias = present(in, kB);
    if (g.has_bias) expect_shape(in, kB, "B", {dirs, checked_mul({8, hidden})}, "[directions, 8*hidden]");
    g.has_lengths = present(in, kSequenceLens);
    if (g.has_lengths) {
      expect_shape(in, kSequenceLens, "sequence_lens", {g.batch}, "[batch]");
      if (const Tensor* t = in[kSequenceLens].constant) check_lengths(t->dtype(), t->data(), g.batch, g.seq);
    }
    g.has_initial_h = present(in, kInitialH);
    const Shape state = p_.batch_major ? Shape{g.batch, dirs, hidden} : Shape{dirs, g.batch, hidden};
    const char* state_layout =
        p_.batch_major ? "[batch, directions, hidden] (layout 1)" : "[directions, batch, hidden]";
    if (g.has_initial_h) expect_shape(in, kInitialH, "initial_h", state, state_layout);
    g.has_initial_c = present(in, kInitialC);
    if (g.has_initial_c) expect_shape(in, kInitialC, "initial_c", state, state_layout);
    g.has_peephole = present(in, kP);
    if (g.has_peephole) expect_shape(in, kP, "P", {dirs, checked_mul({3, hidden})}, "[directions, 3*hidden]");
    return g;
  }

  LstmParams p_;
};

}  // namespace

std::unique_ptr<Op> make_lstm(const Node& node) {
  return std::make_unique<LstmOp>(node);
}

}  // namespace minfer
