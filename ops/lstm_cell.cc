#include "ops/lstm_cell.h"

#include <fmt/format.h>

#include <algorithm>

namespace minfer {

namespace {

// Row blocks of W, R and Wb/Rb, in ONNX's order; P holds i, o, f at the same indices.
enum Gate : int { kInput = 0, kOutput = 1, kForget = 2, kCell = 3 };
constexpr GateSpan kAllGates{0, 4};

// input_forget: f = 1 - i.
void couple_forget_gate(const CellConfig& c, const float* i, int64_t ldi, float* f, int64_t ldf) {
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t j = 0; j < c.hidden_size; ++j) f[b * ldf + j] = 1.0f - i[b * ldi + j];
}

// C = f (.) C on the active rows.
void forget_state(const CellConfig& c, ActiveRows active, const float* f, int64_t ldf, float* cell) {
  for (int64_t b = 0; b < c.batch; ++b) {
    if (!active(b)) continue;
    float* cb = cell + b * c.hidden_size;
    for (int64_t j = 0; j < c.hidden_size; ++j) cb[j] *= f[b * ldf + j];
  }
}

// C = C + i (.) c on the active rows.
void admit_to_state(const CellConfig& c, ActiveRows active, const float* i, int64_t ldi, const float* g, int64_t ldg,
                    float* cell) {
  for (int64_t b = 0; b < c.batch; ++b) {
    if (!active(b)) continue;
    float* cb = cell + b * c.hidden_size;
    for (int64_t j = 0; j < c.hidden_size; ++j) cb[j] += i[b * ldi + j] * g[b * ldg + j];
  }
}

// H = o (.) h(C) on the active rows (h(C) computed in H, whose old value is no longer needed).
void emit_hidden(const CellConfig& c, ActiveRows active, const float* o, int64_t ldo, const float* cell,
                 float* hidden) {
  for (int64_t b = 0; b < c.batch; ++b) {
    if (!active(b)) continue;
    float* hb = hidden + b * c.hidden_size;
    std::copy_n(cell + b * c.hidden_size, c.hidden_size, hb);
    c.activations->tanh(hb, c.hidden_size);  // h(C): the cell state is not clipped
    const float* ob = o + b * ldo;
    for (int64_t j = 0; j < c.hidden_size; ++j) hb[j] *= ob[j];
  }
}

}  // namespace

// Turns one gate's matmul result (Wb and Rb included, by the GEMM's epilogue) into the
// gate, over B rows `ld` apart: adds, for i, o and f, the peephole P (.) C; clips;
// applies the gate's activation.
void LstmCell::finish_gate(const CellWeights& w, int gate, const float* cell, float* pre, int64_t ld) const {
  const int64_t hidden = c_.hidden_size;
  const float* p = w.peephole && gate != kCell ? w.peephole + gate * hidden : nullptr;
  for (int64_t b = 0; b < c_.batch; ++b) {
    float* row = pre + b * ld;
    if (p) {
      const float* cb = cell + b * hidden;
      for (int64_t j = 0; j < hidden; ++j) row[j] += p[j] * cb[j];
    }
    if (gate == kCell)
      tanh(row, hidden);
    else
      sigmoid(row, hidden);
  }
}

int64_t LstmCell::scratch_floats() const {
  const int64_t bh = checked_mul({c_.batch, c_.hidden_size});
  return c_.plan == CellPlan::kMinimal ? checked_mul({2, bh}) : checked_mul({c_.seq_length, 4, bh});
}

std::vector<GateSpan> LstmCell::input_blocks() const {
  if (c_.plan == CellPlan::kFused) return {kAllGates};
  return {{kInput, 1}, {kOutput, 1}, {kForget, 1}, {kCell, 1}};
}

int64_t LstmCell::gemm_scratch_floats(int threads) const {
  const GateSpan span = c_.plan == CellPlan::kMinimal ? GateSpan{kInput, 1} : kAllGates;
  const int64_t input_rows = c_.plan == CellPlan::kMinimal ? c_.batch : checked_mul({c_.seq_length, c_.batch});
  return gate_matmul_scratch_floats(*c_.gemm, c_.input_size, c_.hidden_size, span, span, c_.weights_packed, input_rows,
                                    c_.batch, threads);
}

// The seed's plan: besides C and H, scratch s0 holds i and later o, s1 holds f and
// later c. Each numbered sub-step matches sub_steps() and buffers().
void LstmCell::step_minimal(const RunContext& ctx, const CellWeights& w, const float* x, int64_t t, ActiveRows active,
                            std::span<float> workspace) const {
  const int64_t hidden = c_.hidden_size, bh = c_.batch * hidden;
  float* cell = state(workspace.data(), 1);
  float* h = state(workspace.data(), 0);
  float* s0 = workspace.data() + 2 * bh;
  float* s1 = workspace.data() + 3 * bh;
  const std::span<float> scratch = gemm_scratch(workspace);
  const float* x_t = x + step_offset(t, c_.input_size);
  auto gate = [&](int g, const float* peephole_state, float* dst) {
    const float* wb = w.bias ? w.bias + g * hidden : nullptr;
    const float* rb = w.bias ? w.bias + (4 + g) * hidden : nullptr;
    input_matmul(ctx, *w.gates, {g, 1}, x_t, step_stride(c_.input_size), c_.batch, wb, dst, hidden, scratch);
    recurrent_matmul(ctx, *w.gates, {g, 1}, h, c_.batch, rb, dst, hidden, true, scratch);
    finish_gate(w, g, peephole_state, dst, hidden);
  };
  gate(kInput, cell, s0);  // 0
  if (c_.input_forget)
    couple_forget_gate(c_, s0, hidden, s1, hidden);  // 1
  else
    gate(kForget, cell, s1);
  forget_state(c_, active, s1, hidden, cell);                // 2
  gate(kCell, nullptr, s1);                                  // 3
  admit_to_state(c_, active, s0, hidden, s1, hidden, cell);  // 4
  gate(kOutput, cell, s0);                                   // 5: the peephole sees the new C
  emit_hidden(c_, active, s0, hidden, cell, h);              // 6: Ht-1 was last read in 5
}

// Step t's rows of the gate inputs (row b: i, o, f, c), completed by one GEMM.
void LstmCell::step_fused(const RunContext& ctx, const CellWeights& w, int64_t t, ActiveRows active,
                          std::span<float> workspace) const {
  const int64_t hidden = c_.hidden_size, width = 4 * hidden, ld = step_stride(width);
  float* cell = state(workspace.data(), 1);
  float* h = state(workspace.data(), 0);
  float* g = workspace.data() + state_floats() + step_offset(t, width);
  float* gi = g + kInput * hidden;
  float* go = g + kOutput * hidden;
  float* gf = g + kForget * hidden;
  float* gc = g + kCell * hidden;
  recurrent_matmul(ctx, *w.gates, kAllGates, h, c_.batch, w.bias ? w.bias + width : nullptr, g, ld, true,
                   gemm_scratch(workspace));  // 1
  finish_gate(w, kInput, cell, gi, ld);       // 2
  if (c_.input_forget)
    couple_forget_gate(c_, gi, ld, gf, ld);
  else
    finish_gate(w, kForget, cell, gf, ld);
  finish_gate(w, kCell, nullptr, gc, ld);
  forget_state(c_, active, gf, ld, cell);  // 3
  admit_to_state(c_, active, gi, ld, gc, ld, cell);
  finish_gate(w, kOutput, cell, go, ld);     // 4: the peephole sees the new C
  emit_hidden(c_, active, go, ld, cell, h);  // 5
}

int64_t LstmCell::gate_matmuls() const {
  return c_.plan == CellPlan::kMinimal && c_.input_forget ? 3 : 4;
}

int64_t LstmCell::gate_input_flops(int gate) const {
  return (c_.has_bias ? 2 : 0) + (c_.has_peephole && gate != kCell ? 2 : 0) + clip_flops();
}

int64_t LstmCell::elementwise_flops_per_unit() const {
  const int64_t f = sigmoid_flops();
  const int64_t forget = c_.input_forget ? 1 : gate_input_flops(kForget) + f;
  return gate_input_flops(kInput) + f + forget + gate_input_flops(kCell) + tanh_flops() + gate_input_flops(kOutput) +
         f + 3                // C = f (.) C + i (.) c: two multiplies, one add
         + tanh_flops() + 1;  // H = o (.) h(C)
}

std::vector<std::string> LstmCell::sub_steps() const {
  // A gate from its matmul result `pre`, with the terms this node has (ONNX notation);
  // `bias`: whether `pre` still needs Wb + Rb written out.
  auto gate = [&](char g, const std::string& pre, const char* peephole_state, bool bias = true) {
    std::string s = pre;
    if (c_.has_bias && bias) s += fmt::format(" + Wb{0} + Rb{0}", g);
    if (c_.has_peephole && peephole_state) s += fmt::format(" + P{}(.){}", g, peephole_state);
    if (c_.clip) s = "clip(" + s + ")";
    return fmt::format("{} = {}({})", g, g == 'c' ? 'g' : 'f', s);
  };
  auto matmul = [](char g) { return fmt::format("Xt*W{0}^T + Ht-1*R{0}^T", g); };
  if (c_.plan == CellPlan::kMinimal)
    return {gate('i', matmul('i'), "Ct-1"),
            c_.input_forget ? "f = 1 - i" : gate('f', matmul('f'), "Ct-1"),
            "C = f(.)Ct-1",
            gate('c', matmul('c'), nullptr),
            "C = C + i(.)c",
            gate('o', matmul('o'), "Ct"),
            "H = o(.)h(Ct)"};
  auto column = [](char g) { return fmt::format("Gt[{}]", g); };
  return {std::string("G = X*W^T") + (c_.has_bias ? " + Wb" : "") + " for every step (one GEMM, before step 0)",
          std::string("[i o f c] = Gt += Ht-1*R^T") + (c_.has_bias ? " + Rb" : "") + " (one GEMM)",
          gate('i', column('i'), "Ct-1", false) + ", " +
              (c_.input_forget ? "f = 1 - i" : gate('f', column('f'), "Ct-1", false)) + ", " +
              gate('c', column('c'), nullptr, false),
          "C = f(.)Ct-1 + i(.)c",
          gate('o', column('o'), "Ct", false),
          "H = o(.)h(Ct)"};
}

std::vector<BufferSpan> LstmCell::buffers() const {
  const int64_t bytes = checked_mul({4, c_.batch, c_.hidden_size});
  checked_mul({4, bytes});  // the buffers end at 4 * bytes: refused here if that overflows
  if (c_.plan == CellPlan::kMinimal)
    return {buffer("cell_state", 0, bytes, 0, 6),         buffer("hidden_state", bytes, bytes, 0, 6),
            buffer("input_gate", 2 * bytes, bytes, 0, 4), buffer("forget_gate", 3 * bytes, bytes, 1, 2),
            buffer("cell_gate", 3 * bytes, bytes, 3, 4),  buffer("output_gate", 2 * bytes, bytes, 5, 6)};
  return {buffer("cell_state", 0, bytes, 0, 5), buffer("hidden_state", bytes, bytes, 0, 5),
          buffer("gate_inputs", 2 * bytes, checked_mul({4, scratch_floats()}), 0, 5)};
}

}  // namespace minfer
