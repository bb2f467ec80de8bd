// GRU and RNN against per-row, step-by-step references written here from ONNX's
// equations: both linear_before_reset values, both memory plans, every direction,
// ragged batches, layout 1, omitted outputs, costs by hand and the cell's buffer plan.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "ops/kernels/gemm.h"
#include "tests/op_test_util.h"
#include "tests/recurrent_test_util.h"

namespace minfer::test {
namespace {

struct GruCase {
  int64_t seq, batch, input, hidden;  // input: D; hidden: H
  std::string direction;
  bool linear_before_reset = false;
  bool bias = false, initial_h = false, ragged = false;
  double clip = 0.0;               // 0: no clip attribute
  bool weights_as_inputs = false;  // W and R fed at run time instead of initializers
  std::string op = "GRU";          // or "RNN" (one gate, Tanh)
  bool relu = false;               // RNN: activations Relu (PyTorch's nonlinearity='relu')
};

int64_t directions(const GruCase& c) {
  return c.direction == "bidirectional" ? 2 : 1;
}

int64_t gates(const GruCase& c) {
  return c.op == "GRU" ? 3 : 1;
}

struct GruData {
  std::vector<float> x, w, r, b, lengths, h0;  // empty: input omitted
};

struct GruOutputs {
  std::vector<float> y, y_h;
};

GruData make_data(const GruCase& c) {
  const int64_t dirs = directions(c), h = c.hidden, g = gates(c);
  GruData d;
  d.x = random_values(c.seq * c.batch * c.input, 21);
  d.w = random_values(dirs * g * h * c.input, 22, -0.6f, 0.6f);
  // Relu does not bound the state: smaller recurrent weights keep it from growing each step.
  const float rw = c.relu ? 2.0f / static_cast<float>(h) : 0.6f;
  d.r = random_values(dirs * g * h * h, 23, -rw, rw);
  if (c.bias) d.b = random_values(dirs * 2 * g * h, 24);
  if (c.ragged)
    for (int64_t b = 0; b < c.batch; ++b) d.lengths.push_back(static_cast<float>(1 + (3 * b + c.seq - 1) % c.seq));
  if (c.initial_h) d.h0 = random_values(dirs * c.batch * h, 25);
  return d;
}

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

// ONNX GRU (gates z, r, h) or RNN, one batch row at a time: forward runs t = 0 .. len-1,
// reverse t = len-1 .. 0. Y past a row's length stays 0; Y_h is the state after its last step.
GruOutputs reference(const GruCase& c, const GruData& d) {
  const int64_t dirs = directions(c), hn = c.hidden, dn = c.input, ng = gates(c);
  GruOutputs o;
  o.y.assign(c.seq * dirs * c.batch * hn, 0.0f);
  o.y_h.assign(dirs * c.batch * hn, 0.0f);
  auto clip = [&](double v) { return c.clip > 0 ? std::min(std::max(v, -c.clip), c.clip) : v; };
  for (int64_t dir = 0; dir < dirs; ++dir) {
    const bool reverse = c.direction == "reverse" || dir == 1;
    const float* w = d.w.data() + dir * ng * hn * dn;
    const float* r = d.r.data() + dir * ng * hn * hn;
    auto wb = [&](int64_t row) { return d.b.empty() ? 0.0 : double(d.b[dir * 2 * ng * hn + row]); };
    auto rb = [&](int64_t row) { return d.b.empty() ? 0.0 : double(d.b[dir * 2 * ng * hn + ng * hn + row]); };
    for (int64_t b = 0; b < c.batch; ++b) {
      const int64_t len = d.lengths.empty() ? c.seq : static_cast<int64_t>(d.lengths[b]);
      std::vector<double> h(hn, 0.0);
      if (!d.h0.empty())
        for (int64_t j = 0; j < hn; ++j) h[j] = d.h0[(dir * c.batch + b) * hn + j];
      for (int64_t k = 0; k < len; ++k) {
        const int64_t t = reverse ? len - 1 - k : k;
        const float* xt = d.x.data() + (t * c.batch + b) * dn;
        auto xw = [&](int gate, int64_t j) {
          double v = 0.0;
          for (int64_t q = 0; q < dn; ++q) v += double(xt[q]) * w[(gate * hn + j) * dn + q];
          return v;
        };
        auto hr = [&](int gate, int64_t j, const std::vector<double>& state) {
          double v = 0.0;
          for (int64_t q = 0; q < hn; ++q) v += state[q] * r[(gate * hn + j) * hn + q];
          return v;
        };
        std::vector<double> next(hn);
        if (c.op == "RNN") {
          for (int64_t j = 0; j < hn; ++j) {
            const double pre = clip(xw(0, j) + hr(0, j, h) + wb(j) + rb(j));
            next[j] = c.relu ? std::max(pre, 0.0) : std::tanh(pre);
          }
        } else {
          std::vector<double> z(hn), rg(hn), rh(hn);
          for (int64_t j = 0; j < hn; ++j) {
            z[j] = sigmoid(clip(xw(0, j) + hr(0, j, h) + wb(j) + rb(j)));
            rg[j] = sigmoid(clip(xw(1, j) + hr(1, j, h) + wb(hn + j) + rb(hn + j)));
            rh[j] = rg[j] * h[j];
          }
          for (int64_t j = 0; j < hn; ++j) {
            const double pre = c.linear_before_reset
                                   ? xw(2, j) + wb(2 * hn + j) + rg[j] * (hr(2, j, h) + rb(2 * hn + j))
                                   : xw(2, j) + hr(2, j, rh) + wb(2 * hn + j) + rb(2 * hn + j);
            const double cand = std::tanh(clip(pre));
            next[j] = (1.0 - z[j]) * cand + z[j] * h[j];
          }
        }
        h = next;
        for (int64_t j = 0; j < hn; ++j) o.y[((t * dirs + dir) * c.batch + b) * hn + j] = static_cast<float>(h[j]);
      }
      for (int64_t j = 0; j < hn; ++j) o.y_h[(dir * c.batch + b) * hn + j] = static_cast<float>(h[j]);
    }
  }
  return o;
}

std::vector<TestTensor> gru_inputs(const GruCase& c, const GruData& d) {
  const int64_t dirs = directions(c), h = c.hidden, g = gates(c);
  auto optional = [](bool as_weight, Shape shape, const std::vector<float>& data) {
    if (data.empty()) return TestTensor{};
    return as_weight ? weight(std::move(shape), data) : input(std::move(shape), data);
  };
  return {input({c.seq, c.batch, c.input}, d.x),
          c.weights_as_inputs ? input({dirs, g * h, c.input}, d.w) : weight({dirs, g * h, c.input}, d.w),
          c.weights_as_inputs ? input({dirs, g * h, h}, d.r) : weight({dirs, g * h, h}, d.r),
          optional(true, {dirs, 2 * g * h}, d.b),
          optional(true, {c.batch}, d.lengths),
          optional(false, {dirs, c.batch, h}, d.h0)};
}

Attributes gru_attrs(const GruCase& c, const std::string& plan) {
  Attributes a;
  a.set("hidden_size", c.hidden);
  a.set("direction", c.direction);
  a.set("plan", plan);
  if (c.clip > 0) a.set("clip", c.clip);
  if (c.linear_before_reset) a.set("linear_before_reset", int64_t{1});
  if (c.relu) a.set("activations", std::vector<std::string>(static_cast<size_t>(directions(c)), "Relu"));
  return a;
}

void PrintTo(const GruCase& c, std::ostream* os) {
  *os << c.op << "_" << c.direction << "_s" << c.seq << "_b" << c.batch << "_d" << c.input << "_h" << c.hidden
      << (c.linear_before_reset ? "_lbr" : "") << (c.bias ? "_bias" : "") << (c.initial_h ? "_init" : "")
      << (c.ragged ? "_ragged" : "") << (c.clip > 0 ? "_clip" : "") << (c.weights_as_inputs ? "_wruntime" : "")
      << (c.relu ? "_relu" : "");
}

struct PlanCase {
  GruCase gru;
  std::string plan;
  int threads;
};

void PrintTo(const PlanCase& c, std::ostream* os) {
  PrintTo(c.gru, os);
  *os << "_" << c.plan << "_t" << c.threads;
}

class GruTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(GruTest, MatchesStepByStepReference) {
  const PlanCase& pc = GetParam();
  const GruCase& c = pc.gru;
  const GruData d = make_data(c);
  const GruOutputs want = reference(c, d);
  OpResult r = run_op(c.op, gru_inputs(c, d), gru_attrs(c, pc.plan), 2, pc.threads);
  const int64_t dirs = directions(c);
  EXPECT_EQ(r.shapes[0], (Shape{c.seq, dirs, c.batch, c.hidden}));
  EXPECT_EQ(r.shapes[1], (Shape{dirs, c.batch, c.hidden}));
  EXPECT_LT(max_rel_error(r.outputs[0], want.y), 1e-5);
  EXPECT_LT(max_rel_error(r.outputs[1], want.y_h), 1e-5);
  for (int64_t b = 0; b < c.batch && !d.lengths.empty(); ++b)
    for (int64_t t = static_cast<int64_t>(d.lengths[b]); t < c.seq; ++t)
      for (int64_t dir = 0; dir < dirs; ++dir)
        for (int64_t j = 0; j < c.hidden; ++j)
          ASSERT_EQ(r.outputs[0][((t * dirs + dir) * c.batch + b) * c.hidden + j], 0.0f);
}

std::vector<PlanCase> plan_cases() {
  // seq, batch, D, H, direction, linear_before_reset, bias, initial_h, ragged, clip, weights_as_inputs
  std::vector<GruCase> base = {
      {5, 1, 3, 4, "forward"},
      {1, 1, 1, 1, "forward", true, true, true},
      {7, 3, 5, 9, "reverse", false, true, true, true},
      {7, 3, 5, 9, "reverse", true, true, true, true},
      {6, 4, 10, 7, "bidirectional", false, true, true, true},
      {6, 4, 10, 7, "bidirectional", true, true, true, true},
      {4, 2, 8, 16, "bidirectional", true},
      {3, 2, 5, 3, "forward", false, true, false, true, 0.5},
      {3, 2, 5, 3, "reverse", true, true, false, true, 0.5},
      {6, 3, 7, 5, "reverse", false, true, false, true, 0.0, true},
      {5, 2, 6, 11, "bidirectional", true, false, true, true, 0.8, true},
      // Around the GEMM's tiles: 3H and H not multiples of them, batch 1..5.
      {3, 1, 19, 17, "forward", true, true},
      {3, 4, 70, 35, "bidirectional", false, true, true},
      {2, 5, 13, 65, "forward", true, true, true, true, 0.0, true},
      {4, 3, 1, 19, "bidirectional", false, true, true, true},
      // Products large enough to run on two threads.
      {3, 16, 40, 256, "reverse", true, true, true, true},
      {2, 16, 40, 256, "forward", false, true, true},
  };
  for (GruCase rnn : std::vector<GruCase>{{5, 1, 3, 4, "forward"},
                                          {7, 3, 5, 9, "reverse", false, true, true, true},
                                          {6, 4, 10, 7, "bidirectional", false, true, true, true, 0.6},
                                          {3, 2, 19, 33, "bidirectional", false, true, false, true, 0.0, true},
                                          {2, 16, 40, 256, "forward", false, true, true}}) {
    rnn.op = "RNN";
    base.push_back(rnn);
  }
  // Relu: unbounded states over steps, clipped or not, on two threads too.
  for (GruCase rnn : std::vector<GruCase>{{6, 4, 10, 7, "bidirectional", false, true, true, true, 0.6},
                                          {7, 3, 5, 9, "reverse", false, true, true, true},
                                          {3, 16, 40, 256, "forward", false, true, true}}) {
    rnn.op = "RNN";
    rnn.relu = true;
    base.push_back(rnn);
  }
  std::vector<PlanCase> cases;
  for (const GruCase& c : base)
    for (const char* plan : {"minimal", "fused"})
      for (int threads : {1, 2}) cases.push_back({c, plan, threads});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Sweep, GruTest, ::testing::ValuesIn(plan_cases()));

TEST(Gru, TwoThreadsGiveTheSameBitsAsOne) {
  for (bool lbr : {false, true}) {
    GruCase c{3, 16, 40, 256, "bidirectional", lbr, true, true};
    const GruData d = make_data(c);
    for (const char* plan : {"minimal", "fused"}) {
      SCOPED_TRACE(fmt::format("{} linear_before_reset={}", plan, lbr));
      const OpResult one = run_op("GRU", gru_inputs(c, d), gru_attrs(c, plan), 2, 1);
      const OpResult two = run_op("GRU", gru_inputs(c, d), gru_attrs(c, plan), 2, 2);
      for (int i = 0; i < 2; ++i) EXPECT_EQ(one.outputs[i], two.outputs[i]) << "output " << i;
    }
  }
}

TEST(Gru, BatchMajorLayoutIsTheTransposedProblem) {
  GruCase rnn{5, 2, 19, 20, "reverse", false, true};
  rnn.op = "RNN";
  for (const GruCase& c : {GruCase{4, 3, 5, 6, "bidirectional", true, true, true, true},
                           GruCase{5, 2, 19, 20, "forward", false, true, true}, rnn})
    for (const char* plan : {"minimal", "fused"}) {
      SCOPED_TRACE(::testing::PrintToString(c) + " " + plan);
      const GruData d = make_data(c);
      const int64_t dirs = directions(c), h = c.hidden;
      const GruOutputs want = reference(c, d);
      std::vector<TestTensor> in = gru_inputs(c, d);
      in[0] = input({c.batch, c.seq, c.input}, swap_leading(d.x, c.seq, c.batch, c.input));
      if (c.initial_h) in[5] = input({c.batch, dirs, h}, swap_leading(d.h0, dirs, c.batch, h));
      Attributes attrs = gru_attrs(c, plan);
      attrs.set("layout", int64_t{1});
      const OpResult batch_major = run_op(c.op, in, attrs, 2);
      ASSERT_EQ(batch_major.shapes[0], (Shape{c.batch, c.seq, dirs, h}));
      ASSERT_EQ(batch_major.shapes[1], (Shape{c.batch, dirs, h}));
      EXPECT_LT(max_rel_error(batch_major.outputs[0], swap_leading(want.y, c.seq * dirs, c.batch, h)), 1e-5);
      EXPECT_LT(max_rel_error(batch_major.outputs[1], swap_leading(want.y_h, dirs, c.batch, h)), 1e-5);
    }
}

TEST(Gru, OmittedOutputsAreNotWritten) {
  const GruCase c{6, 3, 4, 5, "bidirectional", true, true, true, true};
  const GruData d = make_data(c);
  const GruOutputs want = reference(c, d);
  for (const auto& outputs : std::vector<std::vector<std::string>>{{"", "out1"}, {"out0"}, {"out0", ""}}) {
    SCOPED_TRACE(fmt::format("outputs [{}]", fmt::join(outputs, ",")));
    Graph g = single_op_graph("GRU", gru_inputs(c, d), gru_attrs(c, "fused"), 2);
    g.nodes[0].outputs = outputs;
    g.outputs.clear();
    for (const std::string& o : outputs)
      if (!o.empty()) g.outputs.push_back(o);
    auto model = compile(std::move(g));
    int64_t written = 0;
    for (size_t i = 0; i < outputs.size(); ++i)
      if (!outputs[i].empty()) written += i == 0 ? 4 * c.seq * 2 * c.batch * c.hidden : 4 * 2 * c.batch * c.hidden;
    EXPECT_EQ(model->steps()[0].cost.bytes_written, written);
    Session s(model);
    s.set_input("in0", d.x);
    s.set_input("in5", d.h0);
    s.run();
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].empty()) continue;
      auto got = s.output(outputs[i]);
      EXPECT_LT(max_rel_error({got.begin(), got.end()}, i == 0 ? want.y : want.y_h), 1e-5) << outputs[i];
    }
  }
}

// Cost, by hand (docs/gru.md). Per step, batch row and direction: 3*H*(D+H) MACs for
// either linear_before_reset. Element-wise FLOPs per hidden unit: bias 2 per gate
// (Wb + Rb), clip 2 per gate, sigmoid 4 (z, r), tanh 5 (h), r's multiply 1, and
// H = h + z (.) (Ht-1 - h) 3.
TEST(Gru, CostBidirectionalWithBias) {
  // seq 3, batch 2, D 5, H 4, two directions: 12 row-steps of 3*4*(5+4) = 108 MACs.
  for (bool lbr : {false, true})
    for (const char* plan : {"minimal", "fused"}) {
      SCOPED_TRACE(fmt::format("{} linear_before_reset={}", plan, lbr));
      const GruCase c{3, 2, 5, 4, "bidirectional", lbr, true, true};
      const GruData d = make_data(c);
      const Cost cost = compile(single_op_graph("GRU", gru_inputs(c, d), gru_attrs(c, plan), 2))->steps()[0].cost;
      EXPECT_EQ(cost.macs, 1296);
      // Per unit: 6 + 8 + 5 + 1 + 3 = 23; 12 row-steps x 4 units.
      EXPECT_EQ(cost.flops, 2 * 1296 + 23 * 12 * 4);
      // W 2*12*5 + R 2*12*4 + B 2*24; initial_h is a graph input, not a parameter.
      EXPECT_EQ(cost.params, 120 + 96 + 48);
      // X 30, W 120, R 96, B 48, initial_h 16 read; Y 3*2*2*4 + Y_h 16 written.
      EXPECT_EQ(cost.bytes_read, 4 * (30 + 120 + 96 + 48 + 16));
      EXPECT_EQ(cost.bytes_written, 4 * (48 + 16));
    }
}

TEST(Gru, CostWithoutBiasWithClipAndOfTheRnn) {
  // seq 2, batch 1, D 3, H 2, no bias, clip: per unit 3*2 + 8 + 5 + 1 + 3 = 23.
  GruCase c{2, 1, 3, 2, "forward"};
  c.clip = 1.0;
  GruData d = make_data(c);
  Cost cost = compile(single_op_graph("GRU", gru_inputs(c, d), gru_attrs(c, "minimal"), 2))->steps()[0].cost;
  EXPECT_EQ(cost.macs, 2 * 3 * 2 * (3 + 2));
  EXPECT_EQ(cost.flops, 2 * 60 + 23 * 4);
  // RNN: H*(D+H) MACs; per unit bias 2 + clip 2 + tanh 5 = 9.
  c.op = "RNN";
  c.bias = true;
  d = make_data(c);
  cost = compile(single_op_graph("RNN", gru_inputs(c, d), gru_attrs(c, "fused"), 2))->steps()[0].cost;
  EXPECT_EQ(cost.macs, 2 * 2 * (3 + 2));
  EXPECT_EQ(cost.flops, 2 * 20 + 9 * 4);
  EXPECT_EQ(cost.params, 2 * 3 + 2 * 2 + 4);
}

// The worked example of docs/cost-model.md: torch's nn.GRU(64, 256) over 32 steps of
// batch 1 (linear_before_reset 1, with B).
TEST(Gru, CostOfTheWorkedExample) {
  const GruCase c{32, 1, 64, 256, "forward", true, true};
  const GruData d = make_data(c);
  const Cost cost = compile(single_op_graph("GRU", gru_inputs(c, d), gru_attrs(c, "minimal"), 2))->steps()[0].cost;
  EXPECT_EQ(cost.macs, 7'864'320);
  EXPECT_EQ(cost.flops, 15'917'056);
  EXPECT_EQ(cost.params, 247'296);
}

TEST(Gru, WorkspaceAndDetailsDescribeThePlan) {
  const int64_t bh_bytes = 4 * 3 * 7;
  for (bool lbr : {false, true})
    for (const char* plan : {"minimal", "fused"}) {
      SCOPED_TRACE(fmt::format("{} linear_before_reset={}", plan, lbr));
      const GruCase c{4, 3, 5, 7, "bidirectional", lbr, true};
      const GruData d = make_data(c);
      auto model = compile(single_op_graph("GRU", gru_inputs(c, d), gru_attrs(c, plan), 2));
      const Step& step = model->steps()[0];
      const nlohmann::json& det = step.facts().details;
      const bool minimal = std::string(plan) == "minimal";
      // minimal: H and two scratch, 3*B*H floats; fused: H, the gate inputs of all 4
      // steps (4 x B x 3H) and the recurrent products (B x 3H, or r (.) Ht-1, B x H).
      const int64_t plan_bytes = (minimal ? 3 : 1 + 4 * 3 + (lbr ? 3 : 1)) * bh_bytes;
      const int64_t gemm = det["gemm_scratch_bytes_per_thread"];
      EXPECT_GT(gemm, 0);
      EXPECT_EQ(step.facts().workspace_bytes, plan_bytes + gemm);
      EXPECT_EQ(det["plan"], plan);
      EXPECT_EQ(det["state_bytes"], bh_bytes);
      EXPECT_EQ(det["scratch_bytes"], plan_bytes - bh_bytes);
      EXPECT_EQ(det["cell_macs"], 3 * 7 * (5 + 7));
      EXPECT_EQ(step.facts().kernel, std::string("gru_") + plan);
      // Packed weights: per direction, the minimal plan's three gate blocks, the fused
      // plan's one [D, 21] for W and, for R, one [H, 21] (linear_before_reset) or
      // [H, 14] and [H, 7].
      const kernels::GemmKernel& kn = kernels::active_gemm_kernel();
      const std::vector<float> w(3 * 7 * 7, 0.5f);
      auto packed = [&](int64_t k, int64_t cols) {
        return kernels::PackedMatrix::pack_b(kn, w.data(), k, true, k, cols).bytes();
      };
      const int64_t per_direction = minimal ? 3 * (packed(5, 7) + packed(7, 7))
                                    : lbr   ? packed(5, 21) + packed(7, 21)
                                            : packed(5, 21) + packed(7, 14) + packed(7, 7);
      EXPECT_EQ(det["packed_weight_bytes"], 2 * per_direction);
      EXPECT_EQ(det["cell_steps"].size(), minimal ? (lbr ? 6u : 5u) : (lbr ? 5u : 6u));
      // H and two scratch slots (minimal), or H, G and P
      EXPECT_EQ(expect_cell_buffers_fit(det, plan_bytes), 3u);
    }
}

TEST(Gru, PlanOverrideReachesEveryGru) {
  const GruCase c{2, 1, 3, 4, "forward", true};
  const GruData d = make_data(c);
  CompileOptions options;
  options.attribute_overrides.push_back({"GRU", "plan", std::string("fused")});
  auto model = compile(single_op_graph("GRU", gru_inputs(c, d), gru_attrs(c, "minimal"), 2), options);
  EXPECT_EQ(model->steps()[0].facts().details["plan"], "fused");
}

void expect_refused(const std::string& op, const GruCase& c, Attributes attrs, const std::string& message) {
  try {
    compile(single_op_graph(op, gru_inputs(c, make_data(c)), std::move(attrs), 2));
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Gru, BadAttributesAndShapesAreRefusedNamingTheNode) {
  const GruCase c{3, 2, 4, 5, "forward", false, true};
  auto with = [&](const char* name, AttrValue v) {
    Attributes a = gru_attrs(c, "minimal");
    a.set(name, std::move(v));
    return a;
  };
  expect_refused("GRU", c, with("activations", std::vector<std::string>{"Relu", "Tanh"}),
                 "<test>: node 'node' (GRU): activations [Relu, Tanh]: only the default Sigmoid, Tanh (per direction) "
                 "is implemented");
  expect_refused("GRU", c, with("activations", std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}),
                 "activations [Sigmoid, Tanh, Tanh]");
  expect_refused("GRU", c, with("linear_before_reset", int64_t{2}), "attribute 'linear_before_reset' must be 0 or 1");
  expect_refused("GRU", c, with("input_forget", int64_t{1}), "unsupported attribute 'input_forget'");
  expect_refused("GRU", c, with("activation_alpha", std::vector<double>{1.0}),
                 "unsupported attribute 'activation_alpha'");
  EXPECT_NO_THROW(compile(single_op_graph("GRU", gru_inputs(c, make_data(c)),
                                          with("activations", std::vector<std::string>{"sigmoid", "TANH"}), 2)));
  GruCase rnn = c;
  rnn.op = "RNN";
  expect_refused("RNN", rnn, with("activations", std::vector<std::string>{"Sigmoid"}),
                 "<test>: node 'node' (RNN): activations [Sigmoid]: only the default Tanh or Relu (per direction) is "
                 "implemented");
  GruCase both = rnn;  // one activation per direction, both Relu or both Tanh
  both.direction = "bidirectional";
  Attributes mixed = gru_attrs(both, "minimal");
  mixed.set("activations", std::vector<std::string>{"Relu", "Tanh"});
  expect_refused("RNN", both, mixed, "activations [Relu, Tanh]: only the default Tanh or Relu (per direction)");
  mixed.set("activations", std::vector<std::string>{"relu", "Relu"});
  EXPECT_NO_THROW(compile(single_op_graph("RNN", gru_inputs(both, make_data(both)), mixed, 2)));
  expect_refused("RNN", rnn, with("linear_before_reset", int64_t{1}), "unsupported attribute 'linear_before_reset'");

  std::vector<TestTensor> in = gru_inputs(c, make_data(c));
  in[1] = weight({1, 15, 3}, random_values(45, 1));
  EXPECT_NE(compile_error("GRU", in, gru_attrs(c, "minimal"), 2)
                .find("W has shape 1x15x3, expected 1x15x4 ([directions, 3*hidden, input])"),
            std::string::npos);
  in = gru_inputs(c, make_data(c));
  in[3] = weight({1, 20}, random_values(20, 1));
  EXPECT_NE(compile_error("GRU", in, gru_attrs(c, "minimal"), 2).find("B has shape 1x20, expected 1x30"),
            std::string::npos);
}

}  // namespace
}  // namespace minfer::test
