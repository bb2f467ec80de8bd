// LSTM against a per-row, step-by-step reference written here from ONNX's equations,
// and against torch.nn.LSTM; both memory plans, every direction, ragged batches,
// omitted outputs, costs by hand and the cell's buffer plan.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ops/kernels/gemm.h"
#include "tests/op_test_util.h"
#include "tests/recurrent_test_util.h"

namespace minfer::test {
namespace {

struct LstmCase {
  int64_t seq, batch, input, hidden;  // input: D; hidden: H
  std::string direction;
  bool bias = false, initial_state = false, ragged = false, peephole = false;
  double clip = 0.0;  // 0: no clip attribute
  bool input_forget = false;
  bool weights_as_inputs = false;  // W and R fed at run time instead of initializers
  bool lengths_as_input = false;   // sequence_lens fed at run time
};

struct LstmData {
  std::vector<float> x, w, r, b, lengths, h0, c0, p;  // empty: input omitted
};

struct LstmOutputs {
  std::vector<float> y, y_h, y_c;
};

int64_t directions(const LstmCase& c) {
  return c.direction == "bidirectional" ? 2 : 1;
}

LstmData make_data(const LstmCase& c) {
  const int64_t dirs = directions(c), h = c.hidden;
  LstmData d;
  d.x = random_values(c.seq * c.batch * c.input, 11);
  d.w = random_values(dirs * 4 * h * c.input, 12, -0.6f, 0.6f);
  d.r = random_values(dirs * 4 * h * h, 13, -0.6f, 0.6f);
  if (c.bias) d.b = random_values(dirs * 8 * h, 14);
  if (c.ragged) {
    for (int64_t b = 0; b < c.batch; ++b) d.lengths.push_back(static_cast<float>(1 + (3 * b + c.seq - 1) % c.seq));
  }
  if (c.initial_state) {
    d.h0 = random_values(dirs * c.batch * h, 15);
    d.c0 = random_values(dirs * c.batch * h, 16, -2.0f, 2.0f);
  }
  if (c.peephole) d.p = random_values(dirs * 3 * h, 17);
  return d;
}

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

// ONNX LSTM, one batch row at a time: forward runs t = 0 .. len-1, reverse runs
// t = len-1 .. 0, so each row's reverse pass starts at its own last element. Y past a
// row's length stays 0; Y_h and Y_c are the state after its last step.
LstmOutputs reference_lstm(const LstmCase& c, const LstmData& d) {
  const int64_t dirs = directions(c), hn = c.hidden, dn = c.input;
  LstmOutputs o;
  o.y.assign(c.seq * dirs * c.batch * hn, 0.0f);
  o.y_h.assign(dirs * c.batch * hn, 0.0f);
  o.y_c.assign(dirs * c.batch * hn, 0.0f);
  auto clip = [&](double v) { return c.clip > 0 ? std::min(std::max(v, -c.clip), c.clip) : v; };
  for (int64_t dir = 0; dir < dirs; ++dir) {
    const bool reverse = c.direction == "reverse" || dir == 1;
    const float* w = d.w.data() + dir * 4 * hn * dn;
    const float* r = d.r.data() + dir * 4 * hn * hn;
    for (int64_t b = 0; b < c.batch; ++b) {
      const int64_t len = d.lengths.empty() ? c.seq : static_cast<int64_t>(d.lengths[b]);
      std::vector<double> h(hn, 0.0), cs(hn, 0.0);
      if (!d.h0.empty())
        for (int64_t j = 0; j < hn; ++j) h[j] = d.h0[(dir * c.batch + b) * hn + j];
      if (!d.c0.empty())
        for (int64_t j = 0; j < hn; ++j) cs[j] = d.c0[(dir * c.batch + b) * hn + j];
      for (int64_t k = 0; k < len; ++k) {
        const int64_t t = reverse ? len - 1 - k : k;
        const float* xt = d.x.data() + (t * c.batch + b) * dn;
        // Xt*(W^T) + Ht-1*(R^T) + Wb + Rb for gate block `gate` (0 i, 1 o, 2 f, 3 c).
        auto pre = [&](int gate, int64_t j) {
          const int64_t row = gate * hn + j;
          double v = 0.0;
          for (int64_t q = 0; q < dn; ++q) v += double(xt[q]) * w[row * dn + q];
          for (int64_t q = 0; q < hn; ++q) v += h[q] * r[row * hn + q];
          if (!d.b.empty()) v += double(d.b[dir * 8 * hn + row]) + d.b[dir * 8 * hn + 4 * hn + row];
          return v;
        };
        auto peep = [&](int gate, int64_t j, double state) {
          return d.p.empty() ? 0.0 : d.p[dir * 3 * hn + gate * hn + j] * state;
        };
        std::vector<double> h_next(hn), c_next(hn);
        for (int64_t j = 0; j < hn; ++j) {
          const double i = sigmoid(clip(pre(0, j) + peep(0, j, cs[j])));
          const double f = c.input_forget ? 1.0 - i : sigmoid(clip(pre(2, j) + peep(2, j, cs[j])));
          const double g = std::tanh(clip(pre(3, j)));
          c_next[j] = f * cs[j] + i * g;
          const double out_gate = sigmoid(clip(pre(1, j) + peep(1, j, c_next[j])));
          h_next[j] = out_gate * std::tanh(c_next[j]);
        }
        h = h_next;
        cs = c_next;
        for (int64_t j = 0; j < hn; ++j) o.y[((t * dirs + dir) * c.batch + b) * hn + j] = static_cast<float>(h[j]);
      }
      for (int64_t j = 0; j < hn; ++j) {
        o.y_h[(dir * c.batch + b) * hn + j] = static_cast<float>(h[j]);
        o.y_c[(dir * c.batch + b) * hn + j] = static_cast<float>(cs[j]);
      }
    }
  }
  return o;
}

std::vector<TestTensor> lstm_inputs(const LstmCase& c, const LstmData& d) {
  const int64_t dirs = directions(c), h = c.hidden;
  auto optional = [](bool as_weight, Shape shape, const std::vector<float>& data) {
    if (data.empty()) return TestTensor{};
    return as_weight ? weight(std::move(shape), data) : input(std::move(shape), data);
  };
  return {input({c.seq, c.batch, c.input}, d.x),
          c.weights_as_inputs ? input({dirs, 4 * h, c.input}, d.w) : weight({dirs, 4 * h, c.input}, d.w),
          c.weights_as_inputs ? input({dirs, 4 * h, h}, d.r) : weight({dirs, 4 * h, h}, d.r),
          optional(true, {dirs, 8 * h}, d.b),
          optional(!c.lengths_as_input, {c.batch}, d.lengths),
          optional(false, {dirs, c.batch, h}, d.h0),
          optional(false, {dirs, c.batch, h}, d.c0),
          optional(true, {dirs, 3 * h}, d.p)};
}

Attributes lstm_attrs(const LstmCase& c, const std::string& plan) {
  Attributes a;
  a.set("hidden_size", c.hidden);
  a.set("direction", c.direction);
  a.set("plan", plan);
  if (c.clip > 0) a.set("clip", c.clip);
  if (c.input_forget) a.set("input_forget", int64_t{1});
  return a;
}

void PrintTo(const LstmCase& c, std::ostream* os) {
  *os << c.direction << "_s" << c.seq << "_b" << c.batch << "_d" << c.input << "_h" << c.hidden
      << (c.bias ? "_bias" : "") << (c.initial_state ? "_init" : "") << (c.ragged ? "_ragged" : "")
      << (c.peephole ? "_peephole" : "") << (c.clip > 0 ? "_clip" : "") << (c.input_forget ? "_coupled" : "")
      << (c.weights_as_inputs ? "_wruntime" : "") << (c.lengths_as_input ? "_lenruntime" : "");
}

struct PlanCase {
  LstmCase lstm;
  std::string plan;
  int threads;
};

void PrintTo(const PlanCase& c, std::ostream* os) {
  PrintTo(c.lstm, os);
  *os << "_" << c.plan << "_t" << c.threads;
}

class LstmTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(LstmTest, MatchesStepByStepReference) {
  const PlanCase& pc = GetParam();
  const LstmCase& c = pc.lstm;
  const LstmData d = make_data(c);
  const LstmOutputs want = reference_lstm(c, d);
  OpResult r = run_op("LSTM", lstm_inputs(c, d), lstm_attrs(c, pc.plan), 3, pc.threads);
  const int64_t dirs = directions(c);
  EXPECT_EQ(r.shapes[0], (Shape{c.seq, dirs, c.batch, c.hidden}));
  EXPECT_EQ(r.shapes[1], (Shape{dirs, c.batch, c.hidden}));
  EXPECT_EQ(r.shapes[2], (Shape{dirs, c.batch, c.hidden}));
  EXPECT_LT(max_rel_error(r.outputs[0], want.y), 1e-5);
  EXPECT_LT(max_rel_error(r.outputs[1], want.y_h), 1e-5);
  EXPECT_LT(max_rel_error(r.outputs[2], want.y_c), 1e-5);
  // Padding steps are exactly zero, not merely close to it.
  for (int64_t b = 0; b < c.batch && !d.lengths.empty(); ++b)
    for (int64_t t = static_cast<int64_t>(d.lengths[b]); t < c.seq; ++t)
      for (int64_t dir = 0; dir < dirs; ++dir)
        for (int64_t j = 0; j < c.hidden; ++j)
          ASSERT_EQ(r.outputs[0][((t * dirs + dir) * c.batch + b) * c.hidden + j], 0.0f);
}

std::vector<PlanCase> plan_cases() {
  // seq, batch, D, H, direction, bias, initial_state, ragged, peephole, clip, input_forget,
  // weights_as_inputs, lengths_as_input
  const std::vector<LstmCase> base = {
      {5, 1, 3, 4, "forward"},
      {1, 1, 1, 1, "forward", true, true},
      {7, 3, 5, 9, "reverse", true, true, true, true},
      {6, 4, 10, 7, "bidirectional", true, true, true, true},
      {4, 2, 8, 16, "bidirectional"},
      {3, 2, 5, 3, "forward", true, false, true, false, 0.5},
      {5, 3, 4, 6, "bidirectional", true, true, true, true, 0.0, true},
      {9, 5, 17, 13, "forward", true, true, false, true},
      {6, 3, 7, 5, "reverse", true, false, true, false, 0.0, false, true, true},
      {5, 2, 6, 11, "bidirectional", false, true, true, true, 0.8, false, true},
      // Around the GEMM's tiles (16 columns, wide tiles of 64 for batch 1, 32 for 2 and
      // 3, 6 rows): 4H and H not multiples of them, batch 1..5, weights packed or fed.
      {3, 1, 19, 17, "forward", true},
      {3, 2, 21, 40, "reverse", true, true},
      {4, 3, 9, 33, "forward", true, false, true, true},
      {3, 4, 70, 35, "bidirectional", true, true},
      {2, 5, 13, 65, "forward", true, true, true, false, 0.0, false, true},
      {3, 1, 33, 50, "bidirectional", true, false, false, true, 0.0, false, true},
      {2, 3, 5, 24, "forward", true, false, false, false, 0.0, true, true},
      // D = 1 (the input products have K = 1) with B = 1 and B > 1, H off the tiles.
      {4, 1, 1, 67, "reverse", true, false, false, true},
      {4, 3, 1, 19, "bidirectional", true, true, true, true},
      {3, 2, 1, 1, "forward", true, true, true, false, 0.0, false, true},
      // Products of 2^20 multiply-adds or more (2^19 per thread, Work::kBetweenSerialSteps) run on two threads:
      // the fused plan's per-step product at batch 4, the minimal plan's at batch 16.
      {3, 4, 40, 256, "forward", true, true},
      {2, 16, 40, 256, "reverse", true, true, true},
      // models/lstm.json's sizes at batch 1 (every product on one thread), both directions.
      {3, 1, 64, 256, "bidirectional", true, false, true, true},
  };
  std::vector<PlanCase> cases;
  for (const LstmCase& c : base)
    for (const char* plan : {"minimal", "fused"})
      for (int threads : {1, 2}) cases.push_back({c, plan, threads});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Sweep, LstmTest, ::testing::ValuesIn(plan_cases()));

TEST(Lstm, MatchesTorchNnLstm) {
  std::ifstream f(std::string(MINFER_SOURCE_DIR) + "/tests/data/lstm/torch_reference.json");
  ASSERT_TRUE(f) << "missing tests/data/lstm/torch_reference.json";
  const nlohmann::json data = nlohmann::json::parse(f);
  ASSERT_EQ(data["cases"].size(), 2u);
  for (const auto& tc : data["cases"]) {
    SCOPED_TRACE(tc["name"].get<std::string>());
    const int64_t s = tc["seq"], b = tc["batch"], dn = tc["input_size"], h = tc["hidden_size"];
    const std::string direction = tc["direction"];
    const int64_t dirs = direction == "bidirectional" ? 2 : 1;
    auto values = [&](const char* key) { return tc[key].get<std::vector<float>>(); };
    std::vector<TestTensor> in = {input({s, b, dn}, values("X")), weight({dirs, 4 * h, dn}, values("W")),
                                  weight({dirs, 4 * h, h}, values("R")), weight({dirs, 8 * h}, values("B"))};
    if (tc.contains("sequence_lens"))
      in.push_back(weight({b}, values("sequence_lens")));
    else
      in.push_back({});
    if (tc.contains("initial_h")) {
      in.push_back(input({dirs, b, h}, values("initial_h")));
      in.push_back(input({dirs, b, h}, values("initial_c")));
    }
    for (const char* plan : {"minimal", "fused"}) {
      SCOPED_TRACE(plan);
      Attributes a;
      a.set("hidden_size", h);
      a.set("direction", direction);
      a.set("plan", std::string(plan));
      OpResult r = run_op("LSTM", in, a, 3);
      EXPECT_LT(max_rel_error(r.outputs[0], values("Y")), 2e-6);
      EXPECT_LT(max_rel_error(r.outputs[1], values("Y_h")), 2e-6);
      EXPECT_LT(max_rel_error(r.outputs[2], values("Y_c")), 2e-6);
    }
  }
}

// A one-LSTM graph whose node omits the outputs named "" in `outputs`.
Graph lstm_graph(const LstmCase& c, const LstmData& d, const std::vector<std::string>& outputs) {
  Graph g = single_op_graph("LSTM", lstm_inputs(c, d), lstm_attrs(c, "minimal"), 3);
  g.nodes[0].outputs = outputs;
  g.outputs.clear();
  for (const std::string& o : outputs)
    if (!o.empty()) g.outputs.push_back(o);
  return g;
}

TEST(Lstm, OmittedOutputsAreNotWrittenNorPlanned) {
  const LstmCase c{6, 3, 4, 5, "bidirectional", true, true, true, true};
  const LstmData d = make_data(c);
  const LstmOutputs want = reference_lstm(c, d);
  for (const auto& outputs :
       std::vector<std::vector<std::string>>{{"", "out1"}, {"", "", "out2"}, {"out0", "", "out2"}}) {
    SCOPED_TRACE(fmt::format("outputs [{}]", fmt::join(outputs, ",")));
    auto model = compile(lstm_graph(c, d, outputs));
    const Step& step = model->steps()[0];
    ASSERT_EQ(step.outputs.size(), outputs.size());
    int64_t written = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      EXPECT_EQ(step.outputs[i] < 0, outputs[i].empty());
      if (!outputs[i].empty()) written += i == 0 ? 4 * c.seq * 2 * c.batch * c.hidden : 4 * 2 * c.batch * c.hidden;
    }
    EXPECT_EQ(step.cost.bytes_written, written);
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i].empty()) continue;
      for (const BufferSpan& b : model->buffers())
        EXPECT_NE(b.name, fmt::format("out{}", i)) << "an omitted output got arena space";
    }
    Session s(model);
    s.set_input("in0", d.x);
    s.set_input("in5", d.h0);
    s.set_input("in6", d.c0);
    s.run();
    const std::vector<const std::vector<float>*> expected = {&want.y, &want.y_h, &want.y_c};
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].empty()) continue;
      auto got = s.output(outputs[i]);
      EXPECT_LT(max_rel_error({got.begin(), got.end()}, *expected[i]), 1e-5) << outputs[i];
    }
  }
}

TEST(Lstm, TwoNodesMayBothOmitAnOutput) {
  const LstmCase c{3, 1, 2, 3, "forward"};
  const LstmData d = make_data(c);
  Graph g = lstm_graph(c, d, {"", "h_a"});
  Node second = g.nodes[0];
  second.name = "node_b";
  second.outputs = {"", "h_b"};
  g.nodes.push_back(second);
  g.outputs.push_back("h_b");
  auto model = compile(std::move(g));
  Session s(model);
  s.set_input("in0", d.x);
  s.run();
  auto a = s.output("h_a"), b = s.output("h_b");
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin()));
}

TEST(Lstm, RequiredOutputCannotBeOmitted) {
  Graph g = single_op_graph("Relu", {input({1, 4}, {1, 2, 3, 4})});
  g.nodes[0].outputs = {""};
  g.outputs = {"in0"};  // a graph needs an output; the node's own is omitted
  try {
    compile(std::move(g));
    FAIL() << "compiled a Relu without its output";
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(), "<test>: node 'node' (Relu): output 0 is required and cannot be omitted");
  }
}

// The GEMM computes every element on one thread in the same order, whatever the split:
// the outputs do not depend on the thread count, bit for bit.
TEST(Lstm, TwoThreadsGiveTheSameBitsAsOne) {
  for (bool weights_as_inputs : {false, true}) {
    // Batch 16: every product of both plans is large enough to be split (Work::kBetweenSerialSteps).
    LstmCase c{3, 16, 40, 256, "bidirectional", true, true};
    c.weights_as_inputs = weights_as_inputs;
    const LstmData d = make_data(c);
    for (const char* plan : {"minimal", "fused"}) {
      SCOPED_TRACE(fmt::format("{} weights_as_inputs={}", plan, weights_as_inputs));
      const OpResult one = run_op("LSTM", lstm_inputs(c, d), lstm_attrs(c, plan), 3, 1);
      const OpResult two = run_op("LSTM", lstm_inputs(c, d), lstm_attrs(c, plan), 3, 2);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(one.outputs[i], two.outputs[i]) << "output " << i;
    }
  }
}

TEST(Lstm, PlansGiveTheSameOutputs) {
  const LstmCase c{8, 3, 12, 10, "bidirectional", true, true, true, true};
  const LstmData d = make_data(c);
  OpResult minimal = run_op("LSTM", lstm_inputs(c, d), lstm_attrs(c, "minimal"), 3);
  OpResult fused = run_op("LSTM", lstm_inputs(c, d), lstm_attrs(c, "fused"), 3);
  for (int i = 0; i < 3; ++i) EXPECT_LT(max_rel_error(minimal.outputs[i], fused.outputs[i]), 1e-6);
}

// Cost, by hand. Element-wise FLOPs per hidden unit and step (docs/lstm.md): bias 2
// per gate (Wb + Rb), peephole 2 for i, o, f, clip 2 per gate, sigmoid 4, tanh 5,
// cell update 3, hidden update 1 + tanh 5.
TEST(Lstm, CostBidirectionalWithBiasAndPeepholes) {
  // seq 3, batch 2, D 5, H 4, two directions: 12 row-steps of 4*4*(5+4) = 144 MACs.
  const LstmCase c{3, 2, 5, 4, "bidirectional", true, true, false, true};
  const LstmData d = make_data(c);
  for (const char* plan : {"minimal", "fused"}) {
    SCOPED_TRACE(plan);
    auto model = compile(single_op_graph("LSTM", lstm_inputs(c, d), lstm_attrs(c, plan), 3));
    const Cost& cost = model->steps()[0].cost;
    EXPECT_EQ(cost.macs, 1728);
    // Per unit: i 2+2+4, f 2+2+4, c 2+5, o 2+2+4, C 3, H 5+1 = 40; 12 row-steps x 4 units.
    EXPECT_EQ(cost.flops, 2 * 1728 + 40 * 12 * 4);
    // W 2*16*5 + R 2*16*4 + B 2*32 + P 2*12; initial_h/c are graph inputs, not parameters.
    EXPECT_EQ(cost.params, 160 + 128 + 64 + 24);
    // X 30, W 160, R 128, B 64, initial_h 16, initial_c 16, P 24 floats read;
    // Y 3*2*2*4 + Y_h 16 + Y_c 16 written.
    EXPECT_EQ(cost.bytes_read, 4 * (30 + 160 + 128 + 64 + 16 + 16 + 24));
    EXPECT_EQ(cost.bytes_written, 4 * (48 + 16 + 16));
  }
}

TEST(Lstm, CostOfTheSeedShapes) {
  // D 64, H 256, 32 steps, batch 1: 4*256*(64+256) = 327,680 MACs per step.
  const LstmCase c{32, 1, 64, 256, "forward", true};
  const LstmData d = make_data(c);
  const Cost cost = compile(single_op_graph("LSTM", lstm_inputs(c, d), lstm_attrs(c, "minimal"), 3))->steps()[0].cost;
  EXPECT_EQ(cost.macs, 32 * 327'680);
  EXPECT_EQ(cost.flops, 2 * 32 * 327'680 + 34 * 256 * 32);  // bias, no peephole: 34 per unit
  EXPECT_EQ(cost.params, 4 * 256 * (64 + 256) + 8 * 256);
}

TEST(Lstm, CostOfInputForgetAndClipDependsOnWhatRuns) {
  // seq 2, batch 1, D 3, H 2, no bias. input_forget: f = 1 - i costs 1 FLOP and no
  // matmul in the minimal plan; the fused GEMM still multiplies all four gates.
  LstmCase c{2, 1, 3, 2, "forward"};
  c.input_forget = true;
  const LstmData d = make_data(c);
  const Cost minimal =
      compile(single_op_graph("LSTM", lstm_inputs(c, d), lstm_attrs(c, "minimal"), 3))->steps()[0].cost;
  const Cost fused = compile(single_op_graph("LSTM", lstm_inputs(c, d), lstm_attrs(c, "fused"), 3))->steps()[0].cost;
  EXPECT_EQ(minimal.macs, 2 * 3 * 2 * (3 + 2));
  EXPECT_EQ(fused.macs, 2 * 4 * 2 * (3 + 2));
  // Per unit: i 4, f 1, c 5, o 4, C 3, H 6 = 23; 2 steps x 2 units.
  EXPECT_EQ(minimal.flops, 2 * 60 + 23 * 4);
  EXPECT_EQ(fused.flops, 2 * 80 + 23 * 4);
  c.input_forget = false;
  c.clip = 1.0;  // clip: 2 per gate input, four gates: 26 + 8 per unit
  EXPECT_EQ(compile(single_op_graph("LSTM", lstm_inputs(c, d), lstm_attrs(c, "minimal"), 3))->steps()[0].cost.flops,
            2 * 80 + 34 * 4);
}

TEST(Lstm, WorkspaceAndDetailsDescribeThePlan) {
  const LstmCase c{4, 3, 5, 7, "bidirectional", true};
  const LstmData d = make_data(c);
  const int64_t bh_bytes = 4 * 3 * 7;
  for (const char* plan : {"minimal", "fused"}) {
    SCOPED_TRACE(plan);
    auto model = compile(single_op_graph("LSTM", lstm_inputs(c, d), lstm_attrs(c, plan), 3));
    const Step& step = model->steps()[0];
    const nlohmann::json& det = step.facts().details;
    const bool minimal = std::string(plan) == "minimal";
    // The seed's 4*B*H floats for the minimal plan; the fused one keeps the gate inputs
    // of all 4 steps, 4 x B x 4H floats, besides C and H. Then the GEMM's scratch for
    // packing the plain operand (X or H; the weights are packed) of its largest product:
    // minimal [B, D] x [D, H] and [B, H] x [H, H], fused [4B, D] x [D, 4H] and [B, H] x [H, 4H].
    const kernels::GemmKernel& kn = kernels::active_gemm_kernel();
    const int64_t gemm = minimal ? std::max(kernels::gemm_workspace_bytes(kn, 3, 7, 5, 1, kernels::GemmPacked::kB),
                                            kernels::gemm_workspace_bytes(kn, 3, 7, 7, 1, kernels::GemmPacked::kB))
                                 : std::max(kernels::gemm_workspace_bytes(kn, 12, 28, 5, 1, kernels::GemmPacked::kB),
                                            kernels::gemm_workspace_bytes(kn, 3, 28, 7, 1, kernels::GemmPacked::kB));
    EXPECT_GT(gemm, 0);
    const int64_t plan_bytes = (minimal ? 4 : 2 + 4 * 4) * bh_bytes;
    EXPECT_EQ(step.facts().workspace_bytes, plan_bytes + gemm);
    EXPECT_EQ(det["plan"], plan);
    EXPECT_EQ(det["state_bytes"], 2 * bh_bytes);
    EXPECT_EQ(det["scratch_bytes"], (minimal ? 2 : 16) * bh_bytes);
    EXPECT_EQ(det["gemm_scratch_bytes_per_thread"], gemm);
    EXPECT_EQ(det["prepacked"], true);
    // The packed W and R live with the model, not in the workspace: per direction, the
    // minimal plan's four gate blocks [D or H, 7] or the fused plan's one [D or H, 28].
    const std::vector<float> w(4 * 7 * 7, 0.5f);
    int64_t packed = 0;
    for (int64_t k : {5, 7})
      packed += minimal ? 4 * kernels::PackedMatrix::pack_b(kn, w.data(), k, true, k, 7).bytes()
                        : kernels::PackedMatrix::pack_b(kn, w.data(), k, true, k, 28).bytes();
    EXPECT_EQ(det["packed_weight_bytes"], 2 * packed);
    EXPECT_EQ(det["cell_macs"], 4 * 7 * (5 + 7));
    EXPECT_EQ(det["hidden_size"], 7);
    EXPECT_EQ(det["directions"], 2);
    EXPECT_EQ(det["cell_steps"].size(), minimal ? 7u : 6u);
    // minimal: C, H and two scratch slots reused
    EXPECT_EQ(expect_cell_buffers_fit(det, plan_bytes), minimal ? 4u : 3u);
    // The workspace is one arena buffer of the step.
    bool planned = false;
    for (const BufferSpan& b : model->buffers())
      planned |= b.name == "node:workspace" && b.bytes == step.facts().workspace_bytes;
    EXPECT_TRUE(planned);
  }
}

// With two threads a bidirectional LSTM runs its directions side by side, one thread
// each, in a workspace per direction (one thread's, as above); the sums are those of one
// thread, bit for bit. A one-direction LSTM keeps one workspace.
TEST(Lstm, TwoThreadsRunTheDirectionsSideBySide) {
  const LstmCase c{5, 3, 5, 7, "bidirectional", true, true, true};
  const LstmData d = make_data(c);
  CompileOptions two_threads;
  two_threads.num_threads = 2;
  for (const char* plan : {"minimal", "fused"}) {
    SCOPED_TRACE(plan);
    const Graph g = single_op_graph("LSTM", lstm_inputs(c, d), lstm_attrs(c, plan), 3);
    const KernelFacts one = compile(g)->steps()[0].facts();
    const KernelFacts two = compile(g, two_threads)->steps()[0].facts();
    EXPECT_FALSE(one.details.contains("directions_in_parallel"));
    EXPECT_EQ(two.details["directions_in_parallel"], true);
    EXPECT_EQ(two.details["direction_workspace_bytes"], one.workspace_bytes);
    EXPECT_EQ(two.workspace_bytes, 2 * one.workspace_bytes);
    const OpResult r1 = run_op("LSTM", lstm_inputs(c, d), lstm_attrs(c, plan), 3, 1);
    const OpResult r2 = run_op("LSTM", lstm_inputs(c, d), lstm_attrs(c, plan), 3, 2);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(r2.outputs[i], r1.outputs[i]) << "output " << i;
    EXPECT_LT(max_rel_error(r2.outputs[0], reference_lstm(c, d).y), 1e-5);
  }
  LstmCase forward = c;
  forward.direction = "forward";
  const LstmData fd = make_data(forward);
  auto model =
      compile(single_op_graph("LSTM", lstm_inputs(forward, fd), lstm_attrs(forward, "minimal"), 3), two_threads);
  EXPECT_FALSE(model->steps()[0].facts().details.contains("directions_in_parallel"));
}

// Without a "plan" attribute (or with "auto") the fused plan runs where its gate inputs,
// seq x batch x 4H floats, take at most 1 MiB, else the minimal one; the report says the
// choice was automatic. 256 steps of H 256 at batch 1: exactly 1 MiB; one step more,
// past it.
TEST(Lstm, AutoPlanIsFusedWhereItsGateInputsTakeAtMostOneMebibyte) {
  for (int64_t seq : {256, 257}) {
    SCOPED_TRACE(seq);
    const LstmCase c{seq, 1, 1, 256, "forward", true};
    const LstmData d = make_data(c);
    const Attributes attrs = lstm_attrs(c, "minimal");
    for (const bool explicit_auto : {false, true}) {
      Attributes a;
      a.set("hidden_size", c.hidden);
      if (explicit_auto) a.set("plan", std::string("auto"));
      auto model = compile(single_op_graph("LSTM", lstm_inputs(c, d), a, 3));
      const nlohmann::json& det = model->steps()[0].facts().details;
      EXPECT_EQ(det["plan"], seq == 256 ? "fused" : "minimal");
      EXPECT_EQ(det["plan_chosen_by"], "auto");
      EXPECT_EQ(det["scratch_bytes"], seq == 256 ? int64_t{1} << 20 : 4 * 2 * 256);
    }
    auto chosen = compile(single_op_graph("LSTM", lstm_inputs(c, d), attrs, 3));
    EXPECT_EQ(chosen->steps()[0].facts().details["plan_chosen_by"], "attribute");
  }
}

TEST(Lstm, PlanOverrideReachesEveryLstm) {
  const LstmCase c{2, 1, 3, 4, "forward"};
  const LstmData d = make_data(c);
  CompileOptions options;
  options.attribute_overrides.push_back({"LSTM", "plan", std::string("fused")});
  auto model = compile(single_op_graph("LSTM", lstm_inputs(c, d), lstm_attrs(c, "minimal"), 3), options);
  EXPECT_EQ(model->steps()[0].facts().details["plan"], "fused");
  EXPECT_EQ(model->steps()[0].kind(), "fused");
  EXPECT_EQ(model->steps()[0].facts().details["scratch_bytes"], 4 * 2 * 4 * 4);  // gate inputs of 2 steps, B 1, 4H 16
}

TEST(Lstm, BatchMajorLayoutIsTheTransposedProblem) {
  // layout 1 puts batch first in X, Y, the initial states and Y_h/Y_c; everything else
  // is the same computation as layout 0. The GEMMs read its X rows and write the fused
  // plan's gate inputs with strides instead of gathering them.
  for (LstmCase c : {LstmCase{4, 3, 5, 6, "bidirectional", true, true, true}, LstmCase{5, 2, 19, 20, "reverse", true}})
    for (bool weights_as_inputs : {false, true})
      for (const char* plan : {"minimal", "fused"}) {
        c.weights_as_inputs = weights_as_inputs;
        SCOPED_TRACE(::testing::PrintToString(c) + " " + plan);
        const LstmData d = make_data(c);
        const int64_t dirs = directions(c), h = c.hidden;
        const OpResult seq_major = run_op("LSTM", lstm_inputs(c, d), lstm_attrs(c, plan), 3);
        std::vector<TestTensor> in = lstm_inputs(c, d);
        in[0] = input({c.batch, c.seq, c.input}, swap_leading(d.x, c.seq, c.batch, c.input));
        if (c.initial_state) {
          in[5] = input({c.batch, dirs, h}, swap_leading(d.h0, dirs, c.batch, h));
          in[6] = input({c.batch, dirs, h}, swap_leading(d.c0, dirs, c.batch, h));
        }
        Attributes attrs = lstm_attrs(c, plan);
        attrs.set("layout", int64_t{1});
        const OpResult batch_major = run_op("LSTM", in, attrs, 3);
        ASSERT_EQ(batch_major.shapes[0], (Shape{c.batch, c.seq, dirs, h}));
        ASSERT_EQ(batch_major.shapes[1], (Shape{c.batch, dirs, h}));
        // Y [seq, dirs, batch, H] viewed as [seq*dirs, batch, H] -> [batch, seq*dirs, H].
        EXPECT_LT(max_rel_error(batch_major.outputs[0], swap_leading(seq_major.outputs[0], c.seq * dirs, c.batch, h)),
                  1e-6);
        EXPECT_LT(max_rel_error(batch_major.outputs[1], swap_leading(seq_major.outputs[1], dirs, c.batch, h)), 1e-6);
        EXPECT_LT(max_rel_error(batch_major.outputs[2], swap_leading(seq_major.outputs[2], dirs, c.batch, h)), 1e-6);
        EXPECT_EQ(batch_major.cost, seq_major.cost);
        // And against the step-by-step reference.
        const LstmOutputs want = reference_lstm(c, d);
        EXPECT_LT(max_rel_error(seq_major.outputs[0], want.y), 1e-5);
      }
}

void expect_refused(const LstmCase& c, const LstmData& d, Attributes attrs, const std::string& message) {
  try {
    compile(single_op_graph("LSTM", lstm_inputs(c, d), std::move(attrs), 3));
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Lstm, BadAttributesAndShapesAreRefused) {
  const LstmCase c{3, 2, 4, 5, "forward", true};
  const LstmData d = make_data(c);
  auto with = [&](const char* name, AttrValue v) {
    Attributes a = lstm_attrs(c, "minimal");
    a.set(name, std::move(v));
    return a;
  };
  expect_refused(c, d, with("layout", int64_t{2}), "attribute 'layout' must be 0 or 1, got 2");
  expect_refused(c, d, with("direction", std::string("sideways")), "attribute 'direction' must be forward");
  expect_refused(c, d, with("plan", std::string("huge")),
                 "attribute 'plan' must be \"auto\", \"minimal\" or \"fused\"");
  expect_refused(c, d, with("activations", std::vector<std::string>{"Relu", "Tanh", "Tanh"}),
                 "activations [Relu, Tanh, Tanh]: only the default Sigmoid, Tanh, Tanh");
  expect_refused(c, d, with("activations", std::vector<std::string>{"Sigmoid", "Tanh"}), "activations [Sigmoid, Tanh]");
  expect_refused(c, d, with("clip", -1.0), "attribute 'clip' must be positive");
  expect_refused(c, d, with("input_forget", int64_t{2}), "attribute 'input_forget' must be 0 or 1");
  expect_refused(c, d, with("hidden_size", int64_t{6}), "attribute 'hidden_size' is 6 but R 1x20x5 has hidden size 5");
  expect_refused(c, d, with("activation_alpha", std::vector<double>{1.0}), "unsupported attribute 'activation_alpha'");
  // Default activations, spelt in any case, are accepted.
  EXPECT_NO_THROW(compile(single_op_graph(
      "LSTM", lstm_inputs(c, d), with("activations", std::vector<std::string>{"sigmoid", "TANH", "Tanh"}), 3)));

  std::vector<TestTensor> in = lstm_inputs(c, d);
  in[1] = weight({1, 20, 3}, random_values(60, 1));
  try {
    compile(single_op_graph("LSTM", in, lstm_attrs(c, "minimal"), 3));
    ADD_FAILURE();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("W has shape 1x20x3, expected 1x20x4 ([directions, 4*hidden, input])"),
              std::string::npos)
        << e.what();
  }
  in = lstm_inputs(c, d);
  in[3] = weight({1, 20}, random_values(20, 1));
  EXPECT_THROW(compile(single_op_graph("LSTM", in, lstm_attrs(c, "minimal"), 3)), ModelError);
  in = lstm_inputs(c, d);
  in[4] = weight({2}, {3, 4});  // longer than the 3 steps
  try {
    compile(single_op_graph("LSTM", in, lstm_attrs(c, "minimal"), 3));
    ADD_FAILURE();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("sequence_lens[1] is 4; lengths must be integers in [1, 3]"),
              std::string::npos)
        << e.what();
  }
}

TEST(Lstm, AHiddenSizeWhoseGatesPass64BitsIsRefused) {
  // R [1, 1, 2^62] as a graph input: 4 * hidden once wrapped to 0 ("expected 1x0x1").
  const int64_t hidden = int64_t{1} << 62;
  EXPECT_EQ(compile_error("LSTM", {input({1, 1, 1}, {}), input({1, 4, 1}, {}), input({1, 1, hidden}, {})}, {}, 3),
            "<test>: node 'node' (LSTM): the product of 4 x 4611686018427387904 overflows 64 bits");
}

TEST(Lstm, BadRunTimeSequenceLengthsNameTheNode) {
  LstmCase c{3, 2, 4, 5, "forward"};
  c.ragged = true;
  c.lengths_as_input = true;
  LstmData d = make_data(c);
  auto model = compile(single_op_graph("LSTM", lstm_inputs(c, d), lstm_attrs(c, "minimal"), 3));
  Session s(model);
  s.set_input("in0", d.x);
  for (const std::vector<float>& lengths : {std::vector<float>{2.5f, 1.0f}, {1.0f, 0.0f}}) {
    s.set_input("in4", lengths);
    try {
      s.run();
      ADD_FAILURE() << "ran with sequence_lens " << lengths[0] << ", " << lengths[1];
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("<test>: node 'node' (LSTM): sequence_lens["), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace minfer::test
