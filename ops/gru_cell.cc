#include "ops/gru_cell.h"

#include <fmt/format.h>

#include <algorithm>

namespace minfer {

namespace {

// Row blocks of W, R, Wb and Rb, in ONNX's order.
enum Gate : int { kUpdate = 0, kReset = 1, kHidden = 2 };
constexpr GateSpan kAllGates{0, 3};
constexpr GateSpan kUpdateAndReset{0, 2};

// H = h + z (.) (H - h) on the active rows: (1 - z) (.) h + z (.) H in three FLOPs.
void update_state(const CellConfig& c, ActiveRows active, const float* z, const float* h, int64_t ld, float* state) {
  for (int64_t b = 0; b < c.batch; ++b) {
    if (!active(b)) continue;
    float* s = state + b * c.hidden_size;
    const float* zb = z + b * ld;
    const float* hb = h + b * ld;
    for (int64_t j = 0; j < c.hidden_size; ++j) s[j] = hb[j] + zb[j] * (s[j] - hb[j]);
  }
}

// out = a (.) b over B rows of H, each operand with its own row stride.
void multiply_rows(const CellConfig& c, const float* a, int64_t lda, const float* b, int64_t ldb, float* out,
                   int64_t ldo) {
  for (int64_t r = 0; r < c.batch; ++r)
    for (int64_t j = 0; j < c.hidden_size; ++j) out[r * ldo + j] = a[r * lda + j] * b[r * ldb + j];
}

}  // namespace

int64_t GruCell::gate_input_floats() const {
  return c_.plan == CellPlan::kFused ? checked_mul({c_.seq_length, 3, c_.batch, c_.hidden_size}) : 0;
}

int64_t GruCell::scratch_floats() const {
  const int64_t bh = checked_mul({c_.batch, c_.hidden_size});
  if (c_.plan == CellPlan::kMinimal) return checked_mul({2, bh});
  // The recurrent products P [B, 3H] (linear_before_reset) or r (.) Ht-1 [B, H].
  return checked_add({gate_input_floats(), c_.linear_before_reset ? checked_mul({3, bh}) : bh});
}

std::vector<GateSpan> GruCell::input_blocks() const {
  if (c_.plan == CellPlan::kFused) return {kAllGates};
  return {{kUpdate, 1}, {kReset, 1}, {kHidden, 1}};
}

std::vector<GateSpan> GruCell::recurrent_blocks() const {
  if (c_.plan == CellPlan::kMinimal) return input_blocks();
  if (c_.linear_before_reset) return {kAllGates};
  return {kUpdateAndReset, {kHidden, 1}};
}

int64_t GruCell::gemm_scratch_floats(int threads) const {
  const bool minimal = c_.plan == CellPlan::kMinimal;
  const int64_t input_rows = minimal ? c_.batch : checked_mul({c_.seq_length, c_.batch});
  int64_t floats = 0;
  for (const GateSpan& r : recurrent_blocks())
    floats = std::max(floats, gate_matmul_scratch_floats(*c_.gemm, c_.input_size, c_.hidden_size, input_blocks()[0], r,
                                                         c_.weights_packed, input_rows, c_.batch, threads));
  return floats;
}

// Besides H, scratch s0 holds r (then what r multiplies) and later z; s1 the candidate
// h. Each numbered sub-step matches sub_steps() and buffers().
void GruCell::step_minimal(const RunContext& ctx, const CellWeights& w, const float* x, int64_t t, ActiveRows active,
                           std::span<float> workspace) const {
  const int64_t hidden = c_.hidden_size, bh = c_.batch * hidden;
  float* h = workspace.data();
  float* s0 = h + bh;
  float* s1 = h + 2 * bh;
  const std::span<float> scratch = gemm_scratch(workspace);
  const float* x_t = x + step_offset(t, c_.input_size);
  const int64_t ldx = step_stride(c_.input_size);
  auto wb = [&](int g) { return w.bias ? w.bias + g * hidden : nullptr; };
  auto rb = [&](int g) { return w.bias ? w.bias + (3 + g) * hidden : nullptr; };
  auto input = [&](int g, float* dst) {
    input_matmul(ctx, *w.gates, {g, 1}, x_t, ldx, c_.batch, wb(g), dst, hidden, scratch);
  };
  auto recurrent = [&](int g, const float* state, float* dst, bool accumulate) {
    recurrent_matmul(ctx, *w.gates, {g, 1}, state, c_.batch, rb(g), dst, hidden, accumulate, scratch);
  };
  input(kReset, s0);  // 0: r
  recurrent(kReset, h, s0, true);
  sigmoid(s0, bh);
  if (c_.linear_before_reset) {
    recurrent(kHidden, h, s1, false);                       // 1: Ht-1*Rh^T + Rbh
    multiply_rows(c_, s0, hidden, s1, hidden, s0, hidden);  // 2
    input(kHidden, s1);                                     // 3: h
    for (int64_t i = 0; i < bh; ++i) s1[i] += s0[i];
  } else {
    multiply_rows(c_, s0, hidden, h, hidden, s0, hidden);  // 1: r (.) Ht-1
    input(kHidden, s1);                                    // 2: h
    recurrent(kHidden, s0, s1, true);
  }
  tanh(s1, bh);
  input(kUpdate, s0);  // z
  recurrent(kUpdate, h, s0, true);
  sigmoid(s0, bh);
  update_state(c_, active, s0, s1, hidden, h);  // Ht-1 was last read here
}

// Step t's rows of the gate inputs (row b: z, r, h), completed by one GEMM with R
// (linear_before_reset) or two.
void GruCell::step_fused(const RunContext& ctx, const CellWeights& w, int64_t t, ActiveRows active,
                         std::span<float> workspace) const {
  const int64_t hidden = c_.hidden_size, width = 3 * hidden, ld = step_stride(width);
  float* h = workspace.data();
  float* g = workspace.data() + state_floats() + step_offset(t, width);
  float* gz = g + kUpdate * hidden;
  float* gr = g + kReset * hidden;
  float* gh = g + kHidden * hidden;
  float* p = workspace.data() + state_floats() + gate_input_floats();
  const std::span<float> scratch = gemm_scratch(workspace);
  const float* rb = w.bias ? w.bias + width : nullptr;
  if (c_.linear_before_reset) {
    recurrent_matmul(ctx, *w.gates, kAllGates, h, c_.batch, rb, p, width, false, scratch);  // 1: P
    for (int64_t b = 0; b < c_.batch; ++b) {                                                // 2: z, r
      float* row = g + b * ld;
      const float* prow = p + b * width;
      for (int64_t j = 0; j < 2 * hidden; ++j) row[j] += prow[j];
      sigmoid(row, 2 * hidden);
      for (int64_t j = 0; j < hidden; ++j) row[2 * hidden + j] += row[hidden + j] * prow[2 * hidden + j];  // 3
      tanh(row + 2 * hidden, hidden);
    }
  } else {
    recurrent_matmul(ctx, *w.gates, kUpdateAndReset, h, c_.batch, rb, g, ld, true, scratch);  // 1
    for (int64_t b = 0; b < c_.batch; ++b) sigmoid(g + b * ld, 2 * hidden);                   // 2
    multiply_rows(c_, gr, ld, h, hidden, p, hidden);                                          // 3
    recurrent_matmul(ctx, *w.gates, {kHidden, 1}, p, c_.batch, rb ? rb + 2 * hidden : nullptr, gh, ld, true,
                     scratch);  // 4
    for (int64_t b = 0; b < c_.batch; ++b) tanh(gh + b * ld, hidden);
  }
  update_state(c_, active, gz, gh, ld, h);  // last
}

int64_t GruCell::elementwise_flops_per_unit() const {
  const int64_t gate_input = (c_.has_bias ? 2 : 0) + clip_flops();  // Wb + Rb, clip; per gate
  return 3 * gate_input + 2 * sigmoid_flops() + tanh_flops() + 1    // z, r, h; r's one multiply
         + 3;                                                       // H = h + z (.) (Ht-1 - h)
}

std::vector<std::string> GruCell::sub_steps() const {
  auto bias = [&](char g) { return c_.has_bias ? fmt::format(" + Wb{0} + Rb{0}", g) : std::string(); };
  auto act = [&](char f, const std::string& s) { return fmt::format("{}({})", f, c_.clip ? "clip(" + s + ")" : s); };
  auto gate = [&](char g) {
    return fmt::format("{0} = {1}", g, act('f', fmt::format("Xt*W{0}^T + Ht-1*R{0}^T", g) + bias(g)));
  };
  const std::string rbh = c_.has_bias ? " + Rbh" : "", wbh = c_.has_bias ? " + Wbh" : "";
  const std::string update = "H = h + z(.)(Ht-1 - h)";
  if (c_.plan == CellPlan::kMinimal) {
    if (c_.linear_before_reset)
      return {gate('r'), "s1 = Ht-1*Rh^T" + rbh, "s0 = r(.)s1", "h = " + act('g', "Xt*Wh^T" + wbh + " + s0"), gate('z'),
              update};
    return {gate('r'), "s0 = r(.)Ht-1", "h = " + act('g', "Xt*Wh^T + s0*Rh^T" + wbh + rbh), gate('z'), update};
  }
  const std::string project =
      std::string("G = X*W^T") + (c_.has_bias ? " + Wb" : "") + " for every step (one GEMM, before step 0)";
  auto column_gate = [&](char g, const std::string& extra) {
    return fmt::format("{} = {}", g, act('f', fmt::format("Gt[{}]", g) + extra));
  };
  if (c_.linear_before_reset)
    return {project, "P = Ht-1*R^T" + std::string(c_.has_bias ? " + Rb" : "") + " (one GEMM)",
            column_gate('z', " + P[z]") + ", " + column_gate('r', " + P[r]"), "h = " + act('g', "Gt[h] + r(.)P[h]"),
            update};
  return {project,
          "Gt[z r] += Ht-1*R[zr]^T" + std::string(c_.has_bias ? " + Rb[zr]" : "") + " (one GEMM)",
          column_gate('z', "") + ", " + column_gate('r', ""),
          "P = r(.)Ht-1",
          "h = " + act('g', "Gt[h] + P*Rh^T" + rbh) + " (one GEMM)",
          update};
}

std::vector<BufferSpan> GruCell::buffers() const {
  const int64_t bytes = checked_mul({4, c_.batch, c_.hidden_size});
  const bool lbr = c_.linear_before_reset;
  if (c_.plan == CellPlan::kMinimal) {
    checked_mul({3, bytes});  // the buffers end at 3 * bytes: refused here if that overflows
    if (lbr)
      return {buffer("hidden_state", 0, bytes, 0, 5), buffer("reset_gate", bytes, bytes, 0, 3),
              buffer("recurrent_candidate", 2 * bytes, bytes, 1, 2), buffer("candidate", 2 * bytes, bytes, 3, 5),
              buffer("update_gate", bytes, bytes, 4, 5)};
    return {buffer("hidden_state", 0, bytes, 0, 4), buffer("reset_gate", bytes, bytes, 0, 2),
            buffer("candidate", 2 * bytes, bytes, 2, 4), buffer("update_gate", bytes, bytes, 3, 4)};
  }
  const int64_t gates = checked_mul({4, gate_input_floats()});
  const int last = lbr ? 4 : 5;
  return {buffer("hidden_state", 0, bytes, 0, last), buffer("gate_inputs", bytes, gates, 0, last),
          lbr ? buffer("recurrent_products", bytes + gates, 3 * bytes, 1, 3)
              : buffer("reset_hidden", bytes + gates, bytes, 3, 4)};
}

}  // namespace minfer
