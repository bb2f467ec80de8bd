// A graph output is never written by a later op. For every op that may run in place,
// a model whose outputs are `a` (from MatMul, Gemm, Conv or Conv + BatchNormalization)
// and `b = op(a)` must return `a` as a naive loop here computes it, with the graph
// passes off and at their defaults; likewise for outputs that are graph inputs,
// constants, or listed twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "engine/engine.h"
#include "tests/op_test_util.h"

namespace minfer {
namespace {

using test::random_values;

Tensor tensor(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  return {shape, random_values(num_elements(shape), seed, lo, hi)};
}

// A producer of `a` from the graph input `x`, and `a` computed naively.
struct Producer {
  const char* name;
  Graph graph;              // x -> ... -> a, with the weights as initializers
  bool batch_norm = false;  // Conv, then BatchNormalization
};

Producer matmul() {
  Producer p{"MatMul", {}};
  p.graph.inputs.push_back({"x", {1, 6}});
  p.graph.initializers["W"] = tensor({6, 8}, 2);
  p.graph.nodes.push_back({"mm", "MatMul", {"x", "W"}, {"a"}, {}});
  return p;
}

Producer gemm() {
  Producer p{"Gemm", {}};
  p.graph.inputs.push_back({"x", {1, 6}});
  p.graph.initializers["W"] = tensor({8, 6}, 3);  // transB: [N, K]
  p.graph.initializers["C"] = tensor({8}, 4);
  Node n{"fc", "Gemm", {"x", "W", "C"}, {"a"}, {}};
  n.attrs.set("transB", int64_t{1});
  p.graph.nodes.push_back(n);
  return p;
}

Producer conv(bool with_bn) {
  Producer p{with_bn ? "Conv+BatchNormalization" : "Conv", {}, with_bn};
  p.graph.inputs.push_back({"x", {1, 2, 5, 5}});
  p.graph.initializers["W"] = tensor({3, 2, 3, 3}, 5);
  p.graph.initializers["B"] = tensor({3}, 6);
  Node n{"conv", "Conv", {"x", "W", "B"}, {with_bn ? "c" : "a"}, {}};
  n.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  p.graph.nodes.push_back(n);
  if (with_bn) {
    p.graph.initializers["s"] = tensor({3}, 7, 0.5f, 1.5f);
    p.graph.initializers["t"] = tensor({3}, 8);
    p.graph.initializers["m"] = tensor({3}, 9);
    p.graph.initializers["v"] = tensor({3}, 10, 0.2f, 2.0f);
    p.graph.nodes.push_back({"bn", "BatchNormalization", {"c", "s", "t", "m", "v"}, {"a"}, {}});
  }
  return p;
}

std::vector<float> init(const Graph& g, const std::string& name) {
  return test::float_values(g.initializers.at(name));
}

// `a` for the input `x`, by the ops' definitions.
std::vector<float> reference_a(const Producer& p, const std::vector<float>& x) {
  const Graph& g = p.graph;
  std::vector<float> a;
  if (g.nodes[0].op_type == "MatMul" || g.nodes[0].op_type == "Gemm") {
    const bool trans = g.nodes[0].op_type == "Gemm";
    const std::vector<float>& w = init(g, "W");
    for (int n = 0; n < 8; ++n) {
      double sum = trans ? init(g, "C")[n] : 0.0;
      for (int k = 0; k < 6; ++k) sum += double(x[k]) * w[trans ? n * 6 + k : k * 8 + n];
      a.push_back(static_cast<float>(sum));
    }
    return a;
  }
  const std::vector<float>&w = init(g, "W"), &b = init(g, "B");
  for (int co = 0; co < 3; ++co)
    for (int y = 0; y < 5; ++y)
      for (int xo = 0; xo < 5; ++xo) {
        double sum = b[co];
        for (int ci = 0; ci < 2; ++ci)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              const int iy = y + ky - 1, ix = xo + kx - 1;
              if (iy < 0 || iy >= 5 || ix < 0 || ix >= 5) continue;
              sum += double(x[(ci * 5 + iy) * 5 + ix]) * w[((co * 2 + ci) * 3 + ky) * 3 + kx];
            }
        if (p.batch_norm) {  // epsilon 1e-5
          const double scale = init(g, "s")[co] / std::sqrt(double(init(g, "v")[co]) + 1e-5);
          sum = (sum - init(g, "m")[co]) * scale + init(g, "t")[co];
        }
        a.push_back(static_cast<float>(sum));
      }
  return a;
}

// Adds `b = <op>(a, ...)` (an op that may run in place over `a`) to a graph where `a`
// has the shape `a_shape`, with any constant inputs it needs.
using ConsumerBuilder = void (*)(Graph& g, const Shape& a_shape);

Node unary(const char* type) {
  return {"op", type, {"a"}, {"b"}, {}};
}

void add_binary(Graph& g, const char* type, const Shape& a_shape) {
  g.initializers["k"] = tensor(a_shape, 21, 0.5f, 2.0f);  // no zeros: Div
  g.nodes.push_back({"op", type, {"a", "k"}, {"b"}, {}});
}

// b = a with a part replaced: ScatterND's slice at (0, 1), the other scatters' element
// at index 1 along axis 1.
void add_scatter(Graph& g, const char* type, const Shape& a_shape) {
  const bool nd = std::string(type) == "ScatterND";
  const Shape one(a_shape.size(), 1);
  Shape updates = nd ? Shape(a_shape.begin() + 2, a_shape.end()) : one;
  if (nd) updates.insert(updates.begin(), 1);
  g.initializers["i"] = nd ? Tensor({1, 2}, std::vector<int64_t>{0, 1}) : Tensor(one, std::vector<int64_t>{1});
  g.initializers["u"] = tensor(updates, 23);
  Node n{"op", type, {"a", "i", "u"}, {"b"}, {}};
  if (!nd) n.attrs.set("axis", int64_t{1});
  g.nodes.push_back(n);
}

struct Consumer {
  const char* op_type;
  ConsumerBuilder add;
};

const std::vector<Consumer>& in_place_consumers() {
  static const std::vector<Consumer> consumers = {
      {"Relu", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Relu")); }},
      {"Clip",
       [](Graph& g, const Shape&) {
         Node n = unary("Clip");
         n.attrs.set("min", -0.1);
         n.attrs.set("max", 0.1);
         g.nodes.push_back(n);
       }},
      {"LeakyRelu", [](Graph& g, const Shape&) { g.nodes.push_back(unary("LeakyRelu")); }},
      {"Elu", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Elu")); }},
      {"Selu", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Selu")); }},
      {"Sigmoid", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Sigmoid")); }},
      {"HardSigmoid", [](Graph& g, const Shape&) { g.nodes.push_back(unary("HardSigmoid")); }},
      {"HardSwish", [](Graph& g, const Shape&) { g.nodes.push_back(unary("HardSwish")); }},
      {"Tanh", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Tanh")); }},
      {"Softplus", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Softplus")); }},
      {"Swish", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Swish")); }},
      {"Celu", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Celu")); }},
      {"ThresholdedRelu", [](Graph& g, const Shape&) { g.nodes.push_back(unary("ThresholdedRelu")); }},
      {"Shrink", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Shrink")); }},
      {"Mish", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Mish")); }},
      {"Add", [](Graph& g, const Shape& s) { add_binary(g, "Add", s); }},
      {"Sub", [](Graph& g, const Shape& s) { add_binary(g, "Sub", s); }},
      {"Mul", [](Graph& g, const Shape& s) { add_binary(g, "Mul", s); }},
      {"Div", [](Graph& g, const Shape& s) { add_binary(g, "Div", s); }},
      {"Mod",
       [](Graph& g, const Shape& s) {
         add_binary(g, "Mod", s);
         g.nodes.back().attrs.set("fmod", int64_t{1});  // float32 Mod is C's fmod
       }},
      {"PRelu", [](Graph& g, const Shape& s) { add_binary(g, "PRelu", s); }},
      {"InstanceNormalization",
       [](Graph& g, const Shape& s) {
         g.initializers["is"] = tensor({s[1]}, 24, 0.5f, 1.5f);
         g.initializers["ib"] = tensor({s[1]}, 25);
         std::string x = "a";
         if (s.size() < 3) {  // [N, C] as [N, C, 1] (an in-place Unsqueeze)
           Node u = unary("Unsqueeze");
           u.name = "u", u.outputs = {"a3"}, x = "a3";
           u.attrs.set("axes", std::vector<int64_t>{2});
           g.nodes.push_back(u);
         }
         g.nodes.push_back({"op", "InstanceNormalization", {x, "is", "ib"}, {"b"}, {}});
       }},
      {"GroupNormalization",
       [](Graph& g, const Shape& s) {
         g.initializers["gs"] = tensor({s[1]}, 26, 0.5f, 1.5f);
         g.initializers["gb"] = tensor({s[1]}, 27);
         Node n{"op", "GroupNormalization", {"a", "gs", "gb"}, {"b"}, {}};
         n.attrs.set("num_groups", s[1] % 3 == 0 ? int64_t{3} : int64_t{1});
         g.nodes.push_back(n);
       }},
      {"BatchNormalization",
       [](Graph& g, const Shape& s) {
         for (const char* stat : {"bs", "bb", "bm", "bv"}) g.initializers[stat] = tensor({s[1]}, 22, 0.5f, 1.5f);
         g.nodes.push_back({"op", "BatchNormalization", {"a", "bs", "bb", "bm", "bv"}, {"b"}, {}});
       }},
      {"Flatten", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Flatten")); }},
      {"Trilu", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Trilu")); }},
      {"Reshape",
       [](Graph& g, const Shape&) {
         g.initializers["shape"] = {{1}, {-1.0f}};
         g.nodes.push_back({"op", "Reshape", {"a", "shape"}, {"b"}, {}});
       }},
      {"Squeeze",
       [](Graph& g, const Shape&) {
         Node n = unary("Squeeze");
         n.attrs.set("axes", std::vector<int64_t>{0});  // the batch of 1
         g.nodes.push_back(n);
       }},
      {"Unsqueeze",
       [](Graph& g, const Shape&) {
         Node n = unary("Unsqueeze");
         n.attrs.set("axes", std::vector<int64_t>{0});
         g.nodes.push_back(n);
       }},
      {"Identity", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Identity")); }},
      {"Dropout", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Dropout")); }},
      {"Neg", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Neg")); }},
      {"Gelu", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Gelu")); }},
      {"Abs", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Abs")); }},
      {"Sign", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Sign")); }},
      {"Sqrt", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Sqrt")); }},
      {"Reciprocal", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Reciprocal")); }},
      {"Exp", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Exp")); }},
      {"Log", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Log")); }},
      {"Floor", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Floor")); }},
      {"Ceil", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Ceil")); }},
      {"Round", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Round")); }},
      {"Erf", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Erf")); }},
      {"Sin", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Sin")); }},
      {"Cos", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Cos")); }},
      {"Tan", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Tan")); }},
      {"Asin", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Asin")); }},
      {"Acos", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Acos")); }},
      {"Atan", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Atan")); }},
      {"Sinh", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Sinh")); }},
      {"Cosh", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Cosh")); }},
      {"Asinh", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Asinh")); }},
      {"Acosh", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Acosh")); }},
      {"Atanh", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Atanh")); }},
      {"Softsign", [](Graph& g, const Shape&) { g.nodes.push_back(unary("Softsign")); }},
      {"Pow", [](Graph& g, const Shape& s) { add_binary(g, "Pow", s); }},
      {"ScatterND", [](Graph& g, const Shape& s) { add_scatter(g, "ScatterND", s); }},
      {"ScatterElements", [](Graph& g, const Shape& s) { add_scatter(g, "ScatterElements", s); }},
      {"Scatter", [](Graph& g, const Shape& s) { add_scatter(g, "Scatter", s); }},
  };
  return consumers;
}

PassOptions passes_off() {
  return {false, false, false};
}

std::vector<float> output(const std::shared_ptr<const CompiledModel>& model, const std::vector<float>& x,
                          const std::string& name) {
  Session s(model);
  s.set_input("x", x);
  s.run();
  s.run();  // a second run reads the same input
  auto out = s.output(name);
  return {out.begin(), out.end()};
}

// The table above holds every op the registry lets run in place (each asked with the
// attributes it requires, if any).
TEST(GraphOutputs, TheTableCoversEveryInPlaceOp) {
  std::set<std::string> listed;
  for (const Consumer& c : in_place_consumers()) listed.insert(c.op_type);
  for (const std::string& type : known_ops()) {
    Node node{"n", type, {}, {}, {}};
    if (type == "Concat") node.attrs.set("axis", int64_t{0});
    if (type == "MaxPool" || type == "AveragePool") node.attrs.set("kernel_shape", std::vector<int64_t>{1});
    if (type == "Constant") node.attrs.set("value_int", int64_t{1});
    if (type == "Cast") node.attrs.set("to", int64_t{1});
    if (type == "LRN") node.attrs.set("size", int64_t{3});
    if (type == "GroupNormalization") node.attrs.set("num_groups", int64_t{1});
    if (type == "DepthToSpace" || type == "SpaceToDepth") node.attrs.set("blocksize", int64_t{2});
    if (type == "Reorder") {
      node.attrs.set("to", std::string("NCHWc"));
      node.attrs.set("lanes", int64_t{16});
    }
    const bool in_place = create_op(node)->traits().inplace_input >= 0;
    EXPECT_EQ(in_place, listed.count(type) > 0) << type;
  }
}

TEST(GraphOutputs, AnOutputReadByAnInPlaceOpKeepsItsValues) {
  for (const Producer& base : {matmul(), gemm(), conv(false), conv(true)}) {
    for (const Consumer& c : in_place_consumers()) {
      for (const PassOptions& passes : {passes_off(), PassOptions{}}) {
        SCOPED_TRACE(std::string(base.name) + " -> " + c.op_type +
                     (passes.clean ? " (default passes)" : " (no passes)"));
        Producer p = base;
        p.graph.source = "<outputs>";
        const Shape a_shape = p.graph.nodes[0].op_type == "Conv" ? Shape{1, 3, 5, 5} : Shape{1, 8};
        c.add(p.graph, a_shape);
        p.graph.outputs = {"a", "b"};
        CompileOptions options;
        options.passes = passes;
        auto model = compile(p.graph, options);
        const std::vector<float> x = random_values(num_elements(p.graph.inputs[0].shape), 31);
        EXPECT_LT(test::max_rel_error(output(model, x, "a"), reference_a(p, x)), 1e-5);
        if (std::string(c.op_type) == "Relu") {
          std::vector<float> relu = reference_a(p, x);
          for (float& v : relu) v = std::max(v, 0.0f);
          EXPECT_LT(test::max_rel_error(output(model, x, "b"), relu), 1e-5);
        }
      }
    }
  }
}

// Outputs read by the last step, which may run in place: `b` listed twice and read by
// an in-place Mul, the graph input `x`, the constant `W`, and `a` before both.
TEST(GraphOutputs, ListedTwiceInputsAndConstants) {
  for (const PassOptions& passes : {passes_off(), PassOptions{}}) {
    Producer p = matmul();
    p.graph.source = "<outputs>";
    p.graph.initializers["k"] = {{1}, {-1.0f}};
    p.graph.nodes.push_back({"relu", "Relu", {"a"}, {"b"}, {}});
    p.graph.nodes.push_back({"tanh", "Tanh", {"x"}, {"t"}, {}});
    p.graph.nodes.push_back({"neg", "Mul", {"b", "k"}, {"n"}, {}});  // the last step
    p.graph.outputs = {"a", "b", "x", "W", "b", "n", "t"};
    CompileOptions options;
    options.passes = passes;
    auto model = compile(p.graph, options);
    ASSERT_EQ(model->steps().back().name, "neg");
    const std::vector<float> x = random_values(6, 41);
    const std::vector<float> a = reference_a(p, x);
    std::vector<float> b = a, n = a;
    for (size_t i = 0; i < a.size(); ++i) n[i] = -(b[i] = std::max(a[i], 0.0f));
    EXPECT_LT(test::max_rel_error(output(model, x, "a"), a), 1e-5);
    EXPECT_LT(test::max_rel_error(output(model, x, "b"), b), 1e-5);
    EXPECT_LT(test::max_rel_error(output(model, x, "n"), n), 1e-5);
    EXPECT_EQ(output(model, x, "x"), x);
    EXPECT_EQ(output(model, x, "W"), init(p.graph, "W"));
  }
}

}  // namespace
}  // namespace minfer
