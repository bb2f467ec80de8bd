#include "ops/lstm_cell.h"

#include <fmt/format.h>

#include <algorithm>

namespace minfer {

namespace {

// Row blocks of W, R and Wb/Rb, in ONNX's order; P holds i, o, f at the same indices.
enum Gate : int { kInput = 0, kOutput = 1, kForget = 2, kCell = 3 };

// Turns one gate's matmul result into the gate, over B rows `ld` apart: adds Wb + Rb
// and, for i, o and f, the peephole P (.) C; clips; applies the gate's activation.
void finish_gate(const LstmCellConfig& c, const LstmCellWeights& w, int gate, const float* cell, float* pre,
                 int64_t ld) {
  const int64_t hidden = c.hidden_size;
  const float* wb = w.bias ? w.bias + gate * hidden : nullptr;
  const float* rb = w.bias ? w.bias + (4 + gate) * hidden : nullptr;
  const float* p = w.peephole && gate != kCell ? w.peephole + gate * hidden : nullptr;
  const Activation& act = gate == kCell ? c.g : c.f;
  for (int64_t b = 0; b < c.batch; ++b) {
    float* row = pre + b * ld;
    if (wb)
      for (int64_t j = 0; j < hidden; ++j) row[j] += wb[j] + rb[j];
    if (p) {
      const float* cb = cell + b * hidden;
      for (int64_t j = 0; j < hidden; ++j) row[j] += p[j] * cb[j];
    }
    if (c.clip) {
      const float bound = *c.clip;
      for (int64_t j = 0; j < hidden; ++j) row[j] = std::clamp(row[j], -bound, bound);
    }
    act.apply(row, hidden);
  }
}

// input_forget: f = 1 - i.
void couple_forget_gate(const LstmCellConfig& c, const float* i, int64_t ldi, float* f, int64_t ldf) {
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t j = 0; j < c.hidden_size; ++j) f[b * ldf + j] = 1.0f - i[b * ldi + j];
}

// C = f (.) C on the active rows.
void forget_state(const LstmCellConfig& c, ActiveRows active, const float* f, int64_t ldf, float* cell) {
  for (int64_t b = 0; b < c.batch; ++b) {
    if (!active(b)) continue;
    float* cb = cell + b * c.hidden_size;
    for (int64_t j = 0; j < c.hidden_size; ++j) cb[j] *= f[b * ldf + j];
  }
}

// C = C + i (.) c on the active rows.
void admit_to_state(const LstmCellConfig& c, ActiveRows active, const float* i, int64_t ldi, const float* g,
                    int64_t ldg, float* cell) {
  for (int64_t b = 0; b < c.batch; ++b) {
    if (!active(b)) continue;
    float* cb = cell + b * c.hidden_size;
    for (int64_t j = 0; j < c.hidden_size; ++j) cb[j] += i[b * ldi + j] * g[b * ldg + j];
  }
}

// H = o (.) h(C) on the active rows.
void emit_hidden(const LstmCellConfig& c, ActiveRows active, const float* o, int64_t ldo, const float* cell,
                 float* hidden) {
  for (int64_t b = 0; b < c.batch; ++b) {
    if (!active(b)) continue;
    const float* cb = cell + b * c.hidden_size;
    float* hb = hidden + b * c.hidden_size;
    for (int64_t j = 0; j < c.hidden_size; ++j) hb[j] = o[b * ldo + j] * c.h.apply(cb[j]);
  }
}

}  // namespace

LstmPlan parse_lstm_plan(const std::string& name) {
  if (name == "minimal") return LstmPlan::kMinimal;
  if (name == "fused") return LstmPlan::kFused;
  throw OpError(fmt::format("attribute 'plan' must be \"minimal\" or \"fused\", got \"{}\"", name));
}

const char* lstm_plan_name(LstmPlan plan) {
  return plan == LstmPlan::kMinimal ? "minimal" : "fused";
}

int64_t LstmCell::scratch_floats() const {
  const int64_t bh = c_.batch * c_.hidden_size;
  return c_.plan == LstmPlan::kMinimal ? 2 * bh : 4 * bh;
}

void LstmCell::step(const RunContext& ctx, const LstmCellWeights& weights, const float* x, ActiveRows active,
                    float* workspace) const {
  if (c_.plan == LstmPlan::kMinimal)
    step_minimal(ctx, weights, x, active, workspace);
  else
    step_fused(ctx, weights, x, active, workspace);
}

// The seed's plan: besides C and H, scratch s0 holds i and later o, s1 holds f and
// later c. Each numbered sub-step matches sub_steps() and buffers().
void LstmCell::step_minimal(const RunContext& ctx, const LstmCellWeights& w, const float* x, ActiveRows active,
                            float* workspace) const {
  const int64_t hidden = c_.hidden_size, bh = c_.batch * hidden;
  float* cell = cell_state(workspace);
  float* h = hidden_state(workspace);
  float* s0 = workspace + 2 * bh;
  float* s1 = workspace + 3 * bh;
  auto gate = [&](int g, const float* peephole_state, float* dst) {
    gate_matmul(ctx, w.gates, c_.input_size, hidden, x, h, c_.batch, g * hidden, hidden, dst, hidden);
    finish_gate(c_, w, g, peephole_state, dst, hidden);
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

// One GEMM for the four gates into g [B, 4H] (row b: i, o, f, c).
void LstmCell::step_fused(const RunContext& ctx, const LstmCellWeights& w, const float* x, ActiveRows active,
                          float* workspace) const {
  const int64_t hidden = c_.hidden_size, ld = 4 * hidden;
  float* cell = cell_state(workspace);
  float* h = hidden_state(workspace);
  float* g = workspace + 2 * c_.batch * hidden;
  float* gi = g + kInput * hidden;
  float* go = g + kOutput * hidden;
  float* gf = g + kForget * hidden;
  float* gc = g + kCell * hidden;
  gate_matmul(ctx, w.gates, c_.input_size, hidden, x, h, c_.batch, 0, ld, g, ld);  // 0
  finish_gate(c_, w, kInput, cell, gi, ld);                                        // 1
  if (c_.input_forget)
    couple_forget_gate(c_, gi, ld, gf, ld);
  else
    finish_gate(c_, w, kForget, cell, gf, ld);
  finish_gate(c_, w, kCell, nullptr, gc, ld);
  forget_state(c_, active, gf, ld, cell);  // 2
  admit_to_state(c_, active, gi, ld, gc, ld, cell);
  finish_gate(c_, w, kOutput, cell, go, ld);  // 3: the peephole sees the new C
  emit_hidden(c_, active, go, ld, cell, h);   // 4
}

int64_t LstmCell::gate_matmuls() const {
  return c_.plan == LstmPlan::kMinimal && c_.input_forget ? 3 : 4;
}

int64_t LstmCell::gate_input_flops(int gate) const {
  return (c_.has_bias ? 2 : 0) + (c_.has_peephole && gate != kCell ? 2 : 0) + (c_.clip ? 2 : 0);
}

int64_t LstmCell::elementwise_flops_per_unit() const {
  const int64_t f = c_.f.flops_per_element();
  const int64_t forget = c_.input_forget ? 1 : gate_input_flops(kForget) + f;
  return gate_input_flops(kInput) + f + forget + gate_input_flops(kCell) + c_.g.flops_per_element() +
         gate_input_flops(kOutput) + f + 3  // C = f (.) C + i (.) c: two multiplies, one add
         + c_.h.flops_per_element() + 1;    // H = o (.) h(C)
}

std::vector<std::string> LstmCell::sub_steps() const {
  // A gate from its matmul result `pre`, with the terms this node has (ONNX notation).
  auto gate = [&](char g, const std::string& pre, const char* peephole_state) {
    std::string s = pre;
    if (c_.has_bias) s += fmt::format(" + Wb{0} + Rb{0}", g);
    if (c_.has_peephole && peephole_state) s += fmt::format(" + P{}(.){}", g, peephole_state);
    if (c_.clip) s = "clip(" + s + ")";
    return fmt::format("{} = {}({})", g, g == 'c' ? 'g' : 'f', s);
  };
  auto matmul = [](char g) { return fmt::format("Xt*W{0}^T + Ht-1*R{0}^T", g); };
  if (c_.plan == LstmPlan::kMinimal)
    return {gate('i', matmul('i'), "Ct-1"),
            c_.input_forget ? "f = 1 - i" : gate('f', matmul('f'), "Ct-1"),
            "C = f(.)Ct-1",
            gate('c', matmul('c'), nullptr),
            "C = C + i(.)c",
            gate('o', matmul('o'), "Ct"),
            "H = o(.)h(Ct)"};
  return {"[i o f c] = Xt*W^T + Ht-1*R^T (one GEMM)",
          gate('i', "i", "Ct-1") + ", " + (c_.input_forget ? "f = 1 - i" : gate('f', "f", "Ct-1")) + ", " +
              gate('c', "c", nullptr),
          "C = f(.)Ct-1 + i(.)c", gate('o', "o", "Ct"), "H = o(.)h(Ct)"};
}

std::vector<CellBuffer> LstmCell::buffers() const {
  const int64_t bytes = 4 * c_.batch * c_.hidden_size;
  if (c_.plan == LstmPlan::kMinimal)
    return {{"cell_state", 0, bytes, 0, 6},         {"hidden_state", bytes, bytes, 0, 6},
            {"input_gate", 2 * bytes, bytes, 0, 4}, {"forget_gate", 3 * bytes, bytes, 1, 2},
            {"cell_gate", 3 * bytes, bytes, 3, 4},  {"output_gate", 2 * bytes, bytes, 5, 6}};
  return {{"cell_state", 0, bytes, 0, 4}, {"hidden_state", bytes, bytes, 0, 4}, {"gates", 2 * bytes, 4 * bytes, 0, 4}};
}

}  // namespace minfer
