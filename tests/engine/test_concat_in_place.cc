// A Concat whose inputs are each one contiguous piece of its output (nothing but ones
// before its axis) gets them written there by their producers: the memory plan places
// such an input inside the Concat's output when the Concat is its last reader, and the
// Concat then copies nothing for it. An input read later, read twice by the Concat, a
// graph output, an input off the 64-byte alignment, or a Concat's own output (nested)
// keeps a buffer of its own and is copied. Every output is checked against the
// concatenation computed here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/engine.h"
#include "tests/op_test_util.h"
#include "tests/profiler/test_machine.h"

namespace minfer {
namespace {

const std::vector<float>& input_values(int64_t n) {
  static const std::vector<float> x = test::random_values(4096, 11);
  EXPECT_LE(n, 4096);
  return x;
}

// x [1, c, h, w]; a = Relu(x), b = x * x, d = Sigmoid(x); the nodes given after them.
Graph concat_graph(Shape x, const std::vector<Node>& nodes, const std::vector<std::string>& outputs) {
  Graph g;
  g.source = "<concat_in_place>";
  g.inputs.push_back({"x", x});
  g.nodes.push_back({"relu", "Relu", {"x"}, {"a"}, {}});
  g.nodes.push_back({"square", "Mul", {"x", "x"}, {"b"}, {}});
  g.nodes.push_back({"sigmoid", "Sigmoid", {"x"}, {"d"}, {}});
  for (const Node& n : nodes) g.nodes.push_back(n);
  g.outputs = outputs;
  return g;
}

Node concat(const std::string& name, std::vector<std::string> inputs, const std::string& output, int64_t axis = 1) {
  Node n{name, "Concat", std::move(inputs), {output}, {}};
  n.attrs.set("axis", axis);
  return n;
}

struct Result {
  std::shared_ptr<const CompiledModel> model;
  std::map<std::string, std::vector<float>> outputs;
};

Result run(const Graph& g) {
  Result r{compile(g), {}};
  Session s(r.model);
  const int64_t n = num_elements(g.inputs[0].shape);
  const std::vector<float>& x = input_values(n);
  s.set_input("x", std::vector<float>(x.begin(), x.begin() + n));
  s.run();
  for (const std::string& name : g.outputs) {
    auto out = s.output(name);
    r.outputs[name] = {out.begin(), out.end()};
  }
  return r;
}

// The element-wise inputs as this test computes them, of the first n floats of x.
std::vector<float> expected(const std::string& tensor, int64_t n) {
  const std::vector<float>& x = input_values(n);
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = tensor == "a" ? std::max(v, 0.0f) : tensor == "b" ? v * v : 1.0f / (1.0f + std::exp(-v));
  }
  return y;
}

std::vector<float> joined(const std::vector<std::vector<float>>& pieces) {
  std::vector<float> y;
  for (const auto& p : pieces) y.insert(y.end(), p.begin(), p.end());
  return y;
}

// Whether tensor `inner` lies in `outer`'s buffer at `bytes` from its start.
bool inside(const CompiledModel& m, const std::string& inner, const std::string& outer, int64_t bytes) {
  return m.values()[m.value_index(inner)].offset == m.values()[m.value_index(outer)].offset + bytes;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-6f) << i;
}

constexpr int64_t kN = 16 * 8 * 8;  // 4 KiB of floats: whole 64-byte lines

TEST(ConcatInPlace, InputsAreWrittenInsideTheOutput) {
  const Result r = run(concat_graph({1, 16, 8, 8}, {concat("join", {"a", "b", "d"}, "y")}, {"y"}));
  EXPECT_TRUE(inside(*r.model, "a", "y", 0));
  EXPECT_TRUE(inside(*r.model, "b", "y", 4 * kN));
  EXPECT_TRUE(inside(*r.model, "d", "y", 8 * kN));
  expect_near(r.outputs.at("y"), joined({expected("a", kN), expected("b", kN), expected("d", kN)}));
  // The report's buffer lists them with the output.
  const auto& buffers = r.model->buffers();
  const auto holds_y = std::find_if(buffers.begin(), buffers.end(), [](const BufferSpan& b) {
    return std::find(b.tensors.begin(), b.tensors.end(), "y") != b.tensors.end();
  });
  ASSERT_NE(holds_y, buffers.end());
  for (const char* t : {"a", "b", "d"})
    EXPECT_NE(std::find(holds_y->tensors.begin(), holds_y->tensors.end(), t), holds_y->tensors.end()) << t;
}

TEST(ConcatInPlace, AnInputReadLaterKeepsItsOwnBuffer) {
  const Result r = run(concat_graph(
      {1, 16, 8, 8}, {concat("join", {"a", "b"}, "y"), Node{"later", "Mul", {"a", "d"}, {"q"}, {}}}, {"y", "q"}));
  EXPECT_FALSE(inside(*r.model, "a", "y", 0));
  EXPECT_TRUE(inside(*r.model, "b", "y", 4 * kN));
  expect_near(r.outputs.at("y"), joined({expected("a", kN), expected("b", kN)}));
  std::vector<float> q = expected("a", kN);
  const std::vector<float> d = expected("d", kN);
  for (int64_t i = 0; i < kN; ++i) q[i] *= d[i];
  expect_near(r.outputs.at("q"), q);
}

TEST(ConcatInPlace, AnInputTwiceAGraphOutputOrAnAxisWithRowsBeforeItIsCopied) {
  {
    const Result r = run(concat_graph({1, 16, 8, 8}, {concat("join", {"a", "b", "a"}, "y")}, {"y"}));
    EXPECT_FALSE(inside(*r.model, "a", "y", 0));
    EXPECT_TRUE(inside(*r.model, "b", "y", 4 * kN));
    expect_near(r.outputs.at("y"), joined({expected("a", kN), expected("b", kN), expected("a", kN)}));
  }
  {
    const Result r = run(concat_graph({1, 16, 8, 8}, {concat("join", {"a", "b"}, "y")}, {"y", "a"}));
    EXPECT_FALSE(inside(*r.model, "a", "y", 0));
    EXPECT_TRUE(inside(*r.model, "b", "y", 4 * kN));
    expect_near(r.outputs.at("y"), joined({expected("a", kN), expected("b", kN)}));
    expect_near(r.outputs.at("a"), expected("a", kN));
  }
  {
    // Along the rows: each input is 16 pieces of the output, not one.
    const Result r = run(concat_graph({1, 16, 8, 8}, {concat("join", {"a", "b"}, "y", 2)}, {"y"}));
    EXPECT_FALSE(inside(*r.model, "a", "y", 0));
    const std::vector<float> a = expected("a", kN), b = expected("b", kN);
    std::vector<float> y;
    for (int64_t c = 0; c < 16; ++c) {
      y.insert(y.end(), a.begin() + c * 64, a.begin() + (c + 1) * 64);
      y.insert(y.end(), b.begin() + c * 64, b.begin() + (c + 1) * 64);
    }
    expect_near(r.outputs.at("y"), y);
  }
}

TEST(ConcatInPlace, OnlyInputsOnTheArenasAlignmentMoveIn) {
  // 3 x 5 x 5 floats: 300 bytes, so the second input would start off a 64-byte line.
  const int64_t n = 75;
  const Result r = run(concat_graph({1, 3, 5, 5}, {concat("join", {"a", "b", "d"}, "y")}, {"y"}));
  EXPECT_TRUE(inside(*r.model, "a", "y", 0));
  EXPECT_FALSE(inside(*r.model, "b", "y", 4 * n));
  EXPECT_FALSE(inside(*r.model, "d", "y", 8 * n));
  expect_near(r.outputs.at("y"), joined({expected("a", n), expected("b", n), expected("d", n)}));
}

TEST(ConcatInPlace, AConcatsOutputInAnotherConcatIsCopied) {
  const Result r =
      run(concat_graph({1, 16, 8, 8}, {concat("inner", {"a", "b"}, "ab"), concat("outer", {"ab", "d"}, "y")}, {"y"}));
  EXPECT_TRUE(inside(*r.model, "a", "ab", 0));
  EXPECT_TRUE(inside(*r.model, "b", "ab", 4 * kN));
  EXPECT_FALSE(inside(*r.model, "ab", "y", 0));
  EXPECT_TRUE(inside(*r.model, "d", "y", 8 * kN));
  expect_near(r.outputs.at("y"), joined({expected("a", kN), expected("b", kN), expected("d", kN)}));
}

// A producer that would run in place over its own input (a Relu over the dead Sigmoid
// output) writes into the Concat's output instead, and the Sigmoid output keeps its buffer.
TEST(ConcatInPlace, AnInPlaceProducerWritesIntoTheOutputInstead) {
  const Result r = run(concat_graph(
      {1, 16, 8, 8}, {Node{"relu_d", "Relu", {"d"}, {"rd"}, {}}, concat("join", {"a", "rd"}, "y")}, {"y"}));
  EXPECT_TRUE(inside(*r.model, "rd", "y", 4 * kN));
  EXPECT_FALSE(inside(*r.model, "d", "y", 4 * kN));
  expect_near(r.outputs.at("y"), joined({expected("a", kN), expected("d", kN)}));
}

// The report keeps the Concat's cost (its inputs read, its output written) and says how
// many of those bytes the plan spared it; its GB/s and roofline count the rest.
TEST(ConcatInPlace, TheReportCountsTheBytesTheConcatMoves) {
  for (bool later : {false, true}) {
    SCOPED_TRACE(later ? "a read later" : "all inputs in place");
    std::vector<Node> nodes = {concat("join", {"a", "b"}, "y")};
    std::vector<std::string> outputs = {"y"};
    if (later) {
      nodes.push_back({"later", "Mul", {"a", "d"}, {"q"}, {}});
      outputs.push_back("q");
    }
    Session s(compile(concat_graph({1, 16, 8, 8}, nodes, outputs)));
    s.set_input("x", std::vector<float>(input_values(kN).begin(), input_values(kN).begin() + kN));
    s.run();
    s.run();
    const nlohmann::json r = profile_report(s, 0, test::test_machine());
    const auto op = std::find_if(r["ops"].begin(), r["ops"].end(), [](const auto& o) { return o["name"] == "join"; });
    ASSERT_NE(op, r["ops"].end());
    EXPECT_EQ((*op)["bytes_read"], 8 * kN);
    EXPECT_EQ((*op)["bytes_written"], 8 * kN);
    const int64_t in_place = later ? 4 * kN : 8 * kN;
    EXPECT_EQ((*op).value("bytes_in_place", int64_t{0}), in_place);
    const double ms = (*op)["time_ms"]["median"].get<double>();
    ASSERT_GT(ms, 0);
    EXPECT_DOUBLE_EQ((*op)["gbytes_per_s"].get<double>(), (16.0 * kN - 2.0 * in_place) / (ms * 1e6));
  }
}

}  // namespace
}  // namespace minfer
