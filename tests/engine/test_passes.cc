// Graph passes on hand-made graphs: BN folding keeps outputs and removes exactly the
// BN's cost, unfoldable BNs stay with a reason, identities and dead nodes go; activation
// fusion keeps outputs and FLOPs and drops the intermediate tensor's bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include "bench/cli_common.h"
#include "engine/engine.h"
#include "engine/passes/eliminate_dead_nodes.h"
#include "engine/passes/eliminate_identities.h"
#include "engine/passes/fold_batch_norm.h"
#include "engine/passes/fuse_activations.h"
#include "engine/passes/fuse_channel_scale.h"
#include "engine/passes/fuse_gelu.h"
#include "engine/passes/fuse_layer_norm.h"
#include "engine/passes/fuse_matmul_bias.h"
#include "engine/passes/fuse_pads.h"
#include "engine/passes/fuse_residual_add.h"
#include "engine/passes/fuse_self_gates.h"
#include "engine/passes/pool_before_pointwise.h"
#include "tests/op_test_util.h"

namespace minfer {
namespace {

using test::random_values;

Tensor tensor(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  return Tensor(shape, random_values(num_elements(shape), seed, lo, hi));
}

// Runs one pass on the graph as a compile would (ops built, types inferred) and puts the
// rewritten graph back.
PassLog apply(Graph& g, PassLog (*pass)(CompileGraph&)) {
  MemoryBudget budget;
  CompileGraph compiling(g, budget);
  PassLog log = pass(compiling);
  g = std::move(compiling).take_graph();
  return log;
}

void add_bn(Graph& g, const std::string& name, const std::string& in, const std::string& out, int64_t c) {
  g.initializers[name + ".s"] = tensor({c}, 11, 0.5f, 1.5f);
  g.initializers[name + ".b"] = tensor({c}, 12);
  g.initializers[name + ".m"] = tensor({c}, 13);
  g.initializers[name + ".v"] = tensor({c}, 14, 0.2f, 2.0f);
  Node bn{name, "BatchNormalization", {in, name + ".s", name + ".b", name + ".m", name + ".v"}, {out}, {}};
  bn.attrs.set("epsilon", 1e-3);
  g.nodes.push_back(bn);
}

// x -> conv (bias optional) -> bn -> relu -> y
Graph conv_bn_relu(bool bias) {
  Graph g;
  g.source = "<conv_bn_relu>";
  g.inputs.push_back({"x", {2, 3, 7, 7}});
  g.initializers["w"] = tensor({4, 3, 3, 3}, 1);
  Node conv{"conv", "Conv", {"x", "w"}, {"c"}, {}};
  if (bias) {
    g.initializers["b"] = tensor({4}, 2);
    conv.inputs.push_back("b");
  }
  conv.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  g.nodes.push_back(conv);
  add_bn(g, "bn", "c", "n", 4);
  g.nodes.push_back({"relu", "Relu", {"n"}, {"y"}, {}});
  g.outputs = {"y"};
  return g;
}

std::vector<float> run_graph(Graph g, bool fold, bool fuse = true) {
  CompileOptions o;
  o.passes.fold_bn = fold;
  o.passes.fuse = fuse;
  auto model = compile(std::move(g), o);
  Session s(model);
  cli::fill_inputs_deterministic(s);
  s.run();
  auto out = s.output(model->graph().outputs[0]);
  return {out.begin(), out.end()};
}

TEST(FoldBatchNorm, ConvWithAndWithoutBias) {
  for (bool bias : {false, true}) {
    Graph g = conv_bn_relu(bias);
    EXPECT_LT(test::max_rel_error(run_graph(g, true), run_graph(g, false)), 1e-5);
    PassLog log = apply(g, fold_batch_norm);
    ASSERT_EQ(log.actions.size(), 1u);
    EXPECT_EQ(log.actions[0].action, "folded");
    EXPECT_EQ(log.actions[0].result, "conv+bn");
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].name, "conv+bn");
    EXPECT_EQ(g.nodes[0].outputs[0], "n");
    EXPECT_FALSE(g.initializers.count("bn.s"));  // BN statistics are gone
    EXPECT_FALSE(g.initializers.count("w"));     // replaced by the folded weights
  }
}

TEST(FoldBatchNorm, FlopsDropByExactlyTheBatchNormCost) {
  CompileOptions off, on;
  off.passes.fold_bn = false;
  off.passes.fuse = on.passes.fuse = false;  // the Relu stays its own step on both sides
  auto before = compile(conv_bn_relu(true), off);
  auto after = compile(conv_bn_relu(true), on);
  const int64_t bn_flops = 2 * 2 * 4 * 7 * 7;  // 2 per element of the 2x4x7x7 output
  EXPECT_EQ(before->total_cost().flops - after->total_cost().flops, bn_flops);
  EXPECT_EQ(before->total_cost().macs, after->total_cost().macs);
  EXPECT_EQ(after->cost_before_passes(), before->total_cost());
  EXPECT_EQ(before->total_cost().params - after->total_cost().params, 4 * 4 - 0);  // 4 stats per channel -> none
  EXPECT_EQ(after->step_index("conv+bn"), 0);
}

TEST(FoldBatchNorm, GemmEitherLayoutWithBeta) {
  for (int64_t trans_b : {0, 1}) {
    for (bool with_c : {false, true}) {
      Graph g;
      g.source = "<gemm_bn>";
      g.inputs.push_back({"x", {3, 5}});
      g.initializers["w"] = tensor(trans_b ? Shape{6, 5} : Shape{5, 6}, 3);
      Node gemm{"fc", "Gemm", {"x", "w"}, {"f"}, {}};
      gemm.attrs.set("transB", trans_b);
      gemm.attrs.set("beta", 0.5);
      gemm.attrs.set("alpha", 2.0);
      if (with_c) {
        g.initializers["c"] = tensor({6}, 4);
        gemm.inputs.push_back("c");
      }
      g.nodes.push_back(gemm);
      add_bn(g, "bn", "f", "y", 6);
      g.outputs = {"y"};
      EXPECT_LT(test::max_rel_error(run_graph(g, true), run_graph(g, false)), 1e-5) << trans_b << with_c;
      EXPECT_EQ(apply(g, fold_batch_norm).actions[0].action, "folded");
    }
  }
}

TEST(FoldBatchNorm, ConvTransposeWithGroups) {
  for (int64_t group : {1, 2}) {
    Graph g;
    g.source = "<deconv_bn>";
    g.inputs.push_back({"x", {1, 4, 5, 5}});
    g.initializers["w"] = tensor({4, 6 / group, 3, 3}, 6);  // [Cin, Cout/group, kh, kw]
    Node up{"up", "ConvTranspose", {"x", "w"}, {"u"}, {}};
    up.attrs.set("strides", std::vector<int64_t>{2, 2});
    up.attrs.set("group", group);
    g.nodes.push_back(up);
    add_bn(g, "bn", "u", "y", 6);
    g.outputs = {"y"};
    EXPECT_LT(test::max_rel_error(run_graph(g, true), run_graph(g, false)), 1e-5) << group;
    EXPECT_EQ(apply(g, fold_batch_norm).actions[0].result, "up+bn");
  }
}

TEST(FoldBatchNorm, KeepsWhatCannotBeFolded) {
  // The conv output also feeds a second reader.
  Graph shared = conv_bn_relu(true);
  shared.nodes.push_back({"tap", "Relu", {"c"}, {"t"}, {}});
  shared.outputs.push_back("t");
  PassLog log = apply(shared, fold_batch_norm);
  ASSERT_EQ(log.actions.size(), 1u);
  EXPECT_EQ(log.actions[0].action, "kept");
  EXPECT_EQ(log.actions[0].reason, "the output of 'conv' is also read elsewhere");
  // BN after a Relu (conv, ReLU, BN cannot fold: docs/teaching.md).
  Graph after_relu = conv_bn_relu(true);
  after_relu.nodes = {after_relu.nodes[0], {"relu", "Relu", {"c"}, {"r"}, {}}, after_relu.nodes[1]};
  after_relu.nodes[2].inputs[0] = "r";
  after_relu.nodes[2].outputs[0] = "y";
  log = apply(after_relu, fold_batch_norm);
  EXPECT_EQ(log.actions[0].action, "kept");
  EXPECT_EQ(log.actions[0].reason, "it follows 'relu' (Relu), it has no weights to fold a channel scale into");
  EXPECT_EQ(after_relu.nodes.size(), 3u);
  // Weights that are a graph input, not a constant.
  Graph live = conv_bn_relu(false);
  live.initializers.erase("w");
  live.inputs.push_back({"w", {4, 3, 3, 3}});
  EXPECT_EQ(apply(live, fold_batch_norm).actions[0].reason,
            "it follows 'conv' (Conv), whose weights are not constants");
}

TEST(EliminateIdentities, InsideAndAtTheOutput) {
  Graph g;
  g.source = "<identities>";
  g.inputs.push_back({"x", {4}});
  g.nodes.push_back({"id1", "Identity", {"x"}, {"a"}, {}});
  g.nodes.push_back({"relu", "Relu", {"a"}, {"b"}, {}});
  g.nodes.push_back({"drop", "Dropout", {"b"}, {"y"}, {}});
  g.outputs = {"y"};
  PassLog log = apply(g, eliminate_identities);
  EXPECT_EQ(log.actions.size(), 2u);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs[0], "x");
  EXPECT_EQ(g.nodes[0].outputs[0], "y");  // the graph output keeps its name
  // An identity from a graph input straight to the output must stay.
  Graph passthrough;
  passthrough.inputs.push_back({"x", {4}});
  passthrough.nodes.push_back({"id", "Identity", {"x"}, {"y"}, {}});
  passthrough.outputs = {"y"};
  EXPECT_TRUE(apply(passthrough, eliminate_identities).actions.empty());
  EXPECT_EQ(passthrough.nodes.size(), 1u);
}

// Pads of all zeros copy: they go, in the attribute form (opset 2) and the input form
// (11+); a Pad with one nonzero pad stays.
TEST(EliminateIdentities, PadsOfZero) {
  for (bool as_input : {false, true}) {
    Graph g;
    g.source = "<zero_pads>";
    g.inputs.push_back({"x", {1, 2, 3, 3}});
    auto pad = [&](const std::string& name, const std::string& in, const std::string& out, std::vector<int64_t> p) {
      Node n{name, "Pad", {in}, {out}, {}};
      if (as_input) {
        g.initializers[name + ".pads"] = Tensor(Shape{8}, p);
        n.inputs.push_back(name + ".pads");
      } else {
        n.attrs.set("pads", p);
      }
      g.nodes.push_back(n);
    };
    pad("zero", "x", "a", {0, 0, 0, 0, 0, 0, 0, 0});
    g.nodes.push_back({"relu", "Relu", {"a"}, {"b"}, {}});
    pad("one", "b", "y", {0, 0, 1, 0, 0, 0, 0, 0});
    g.outputs = {"y"};
    const std::vector<float> before = run_graph(g, true);
    PassLog log = apply(g, eliminate_identities);
    ASSERT_EQ(log.actions.size(), 1u) << as_input;
    EXPECT_EQ(log.actions[0].nodes[0], "zero");
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].inputs[0], "x");
    EXPECT_EQ(g.nodes[1].name, "one");
    EXPECT_EQ(run_graph(g, true), before);
  }
}

// x * Sigmoid(x) -> Swish and x * HardSigmoid(x) (alpha 1/6, beta 1/2) -> HardSwish,
// either operand order; a gate read elsewhere, a gate of another tensor, or another
// HardSigmoid stays. The outputs do not change beyond rounding.
TEST(FuseSelfGates, SwishAndHardSwish) {
  Graph g;
  g.source = "<self_gates>";
  g.inputs.push_back({"x", {2, 3, 4}});
  g.inputs.push_back({"z", {2, 3, 4}});
  g.nodes.push_back({"sig", "Sigmoid", {"x"}, {"s"}, {}});
  g.nodes.push_back({"mul1", "Mul", {"x", "s"}, {"a"}, {}});
  Node hs{"hsig", "HardSigmoid", {"a"}, {"h"}, {}};
  hs.attrs.set("alpha", double(1.0f / 6.0f));
  hs.attrs.set("beta", 0.5);
  g.nodes.push_back(hs);
  g.nodes.push_back({"mul2", "Mul", {"h", "a"}, {"b"}, {}});
  Node other = hs;  // the default alpha 0.2: not HardSwish
  other.name = "hsig02", other.inputs = {"b"}, other.outputs = {"h2"};
  other.attrs = {};
  g.nodes.push_back(other);
  g.nodes.push_back({"mul3", "Mul", {"b", "h2"}, {"c"}, {}});
  g.nodes.push_back({"sig2", "Sigmoid", {"c"}, {"s2"}, {}});
  g.nodes.push_back({"mul4", "Mul", {"c", "s2"}, {"d"}, {}});
  g.nodes.push_back({"sig3", "Sigmoid", {"z"}, {"s3"}, {}});
  g.nodes.push_back({"mul5", "Mul", {"d", "s3"}, {"y"}, {}});  // gates another tensor
  g.outputs = {"y", "s2"};                                     // s2 is read elsewhere
  const std::vector<float> before = run_graph(g, true, false);
  Graph rewritten = g;
  PassLog log = apply(rewritten, fuse_self_gates);
  ASSERT_EQ(log.actions.size(), 2u);
  EXPECT_EQ(log.actions[0].result, "sig+mul1");
  EXPECT_EQ(log.actions[1].result, "hsig+mul2");
  // Sigmoid's 4 FLOPs and the Mul's 1 per element become Swish's 4; HardSigmoid's 4
  // and the Mul's 1 HardSwish's 5. The gate's write and two reads go.
  EXPECT_EQ(log.actions[0].before.flops, 5 * 24);
  EXPECT_EQ(log.actions[0].after.flops, 4 * 24);
  EXPECT_EQ(log.actions[1].before.flops, 5 * 24);
  EXPECT_EQ(log.actions[1].after.flops, 5 * 24);
  for (const PassAction& a : log.actions) {
    EXPECT_EQ(a.action, "fused");
    EXPECT_EQ(a.before.bytes_read - a.after.bytes_read, 2 * 4 * 24);
    EXPECT_EQ(a.before.bytes_written - a.after.bytes_written, 4 * 24);
  }
  ASSERT_EQ(rewritten.nodes.size(), g.nodes.size() - 2);
  EXPECT_EQ(rewritten.nodes[0].op_type, "Swish");
  EXPECT_EQ(rewritten.nodes[0].inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(rewritten.nodes[0].outputs, std::vector<std::string>{"a"});
  EXPECT_EQ(rewritten.nodes[1].op_type, "HardSwish");
  EXPECT_LT(test::max_rel_error(run_graph(rewritten, true, false), before), 1e-6);
  // With all passes, the graph's result is the same too.
  EXPECT_LT(test::max_rel_error(run_graph(g, true, true), before), 1e-6);
}

// A Conv's x * Sigmoid(x) ends as one Conv with Swish in its epilogue.
TEST(FuseSelfGates, SwishFusesIntoTheConv) {
  Graph g = conv_bn_relu(true);
  g.nodes.back() = {"sig", "Sigmoid", {"n"}, {"s"}, {}};
  g.nodes.push_back({"mul", "Mul", {"s", "n"}, {"y"}, {}});
  auto model = compile(g);
  ASSERT_EQ(model->steps().size(), 1u);
  EXPECT_EQ(model->steps()[0].name, "conv+bn+sig+mul");
  EXPECT_EQ(model->steps()[0].facts().details["fused_activation"], "Swish");
  EXPECT_LT(test::max_rel_error(run_graph(g, true, true), run_graph(g, true, false)), 1e-5);
}

TEST(EliminateDeadNodes, UnusedBranchAndItsWeights) {
  Graph g;
  g.source = "<dead>";
  g.inputs.push_back({"x", {4}});
  g.initializers["k"] = tensor({4}, 5);
  g.nodes.push_back({"used", "Relu", {"x"}, {"y"}, {}});
  g.nodes.push_back({"dead1", "Add", {"x", "k"}, {"d1"}, {}});
  g.nodes.push_back({"dead2", "Relu", {"d1"}, {"d2"}, {}});
  g.outputs = {"y"};
  PassLog log = apply(g, eliminate_dead_nodes);
  EXPECT_EQ(log.actions.size(), 2u);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_TRUE(g.initializers.empty());
}

TEST(Passes, FoldingKeepsEveryBundledModelsOutputs) {
  for (const auto& e : std::filesystem::directory_iterator(std::string(MINFER_SOURCE_DIR) + "/models")) {
    if (e.path().extension() != ".json") continue;
    SCOPED_TRACE(e.path().string());
    Graph g = load_model(e.path().string());
    EXPECT_LT(test::max_rel_error(run_graph(g, true), run_graph(g, false)), 1e-4);
    auto folded = compile(g);
    for (const Step& s : folded->steps()) {
      if (s.op_type != "BatchNormalization") continue;
      // Any BN left must not be reading a Conv's output.
      for (const Step& p : folded->steps())
        for (int o : p.outputs) EXPECT_FALSE(o == s.inputs[0] && p.op_type == "Conv") << s.name;
    }
  }
}

TEST(FuseActivations, ConvBnReluBecomesOneNodeWithTheSameFlops) {
  CompileOptions unfused;
  unfused.passes.fuse = false;
  auto before = compile(conv_bn_relu(true), unfused);
  auto after = compile(conv_bn_relu(true));
  ASSERT_EQ(after->steps().size(), 1u);
  const Step& step = after->steps()[0];
  EXPECT_EQ(step.name, "conv+bn+relu");
  EXPECT_EQ(step.facts().details["fused_activation"], "Relu");
  EXPECT_EQ(step.facts().details["kernel"], "direct_simd");
  // The Relu's FLOPs move into the Conv; its read and write of the 2x4x7x7 tensor go.
  const int64_t elements = 2 * 4 * 7 * 7;
  EXPECT_EQ(after->total_cost().flops, before->total_cost().flops);
  EXPECT_EQ(after->total_cost().macs, before->total_cost().macs);
  EXPECT_EQ(step.cost.flops, 2 * step.cost.macs + elements);
  EXPECT_EQ(before->total_cost().bytes_read - after->total_cost().bytes_read, 4 * elements);
  EXPECT_EQ(before->total_cost().bytes_written - after->total_cost().bytes_written, 4 * elements);
  EXPECT_LT(test::max_rel_error(run_graph(conv_bn_relu(true), true, true), run_graph(conv_bn_relu(true), true, false)),
            1e-6);
}

// InstanceNormalization and GroupNormalization take the Relu after them (a style
// transfer network's): the same values as the two steps, and the FLOPs; the activation's
// pass over memory gone.
TEST(FuseActivations, NormalizationsTakeTheActivationAfterThem) {
  for (const char* op : {"InstanceNormalization", "GroupNormalization"}) {
    Graph g;
    g.source = "<norm_relu>";
    g.inputs = {{"x", {2, 4, 3, 5}}};
    g.initializers["s"] = Tensor({4}, std::vector<float>{0.5f, 1.0f, -2.0f, 1.5f});
    g.initializers["b"] = Tensor({4}, std::vector<float>{0.25f, -0.5f, 0.0f, 1.0f});
    Node norm{"norm", op, {"x", "s", "b"}, {"n"}, {}};
    if (std::string(op) == "GroupNormalization") norm.attrs.set("num_groups", int64_t{2});
    g.nodes.push_back(norm);
    g.nodes.push_back({"relu", "Relu", {"n"}, {"y"}, {}});
    g.outputs = {"y"};
    // Both without the layout pass: where its regions and Reorders fall depends on what
    // the activations are fused into, and only the fusions' steps are counted below.
    CompileOptions fused_options;
    fused_options.passes.blocked_layout = false;
    CompileOptions unfused_options = fused_options;
    unfused_options.passes.fuse = false;
    auto unfused = compile(g, unfused_options);
    auto fused = compile(g, fused_options);
    ASSERT_EQ(fused->steps().size(), 1u) << op;
    EXPECT_EQ(fused->steps()[0].facts().details["fused_activation"], "Relu");
    EXPECT_EQ(fused->total_cost().flops, unfused->total_cost().flops);
    EXPECT_LT(fused->total_cost().bytes_read, unfused->total_cost().bytes_read);
    const std::vector<float> x = random_values(120, 61, -3.0f, 3.0f);
    std::vector<float> y[2];
    for (int k = 0; k < 2; ++k) {
      Session s(k ? fused : unfused);
      s.set_input("x", x);
      s.run();
      const auto out = s.output("y");
      y[k].assign(out.begin(), out.end());
    }
    EXPECT_EQ(y[0], y[1]) << op;
    EXPECT_TRUE(std::any_of(y[1].begin(), y[1].end(), [](float v) { return v == 0.0f; })) << op;
  }
}

// A residual block's Add takes the Relu after it (one pass over the sum instead of
// two), and a broadcast Mul its Sigmoid: values by hand, cost moved, not changed.
TEST(FuseActivations, BinaryOpsTakeTheActivationAfterThem) {
  Graph g;
  g.source = "<add_relu>";
  g.inputs = {{"x", {1, 2, 1, 3}}, {"r", {1, 2, 1, 3}}, {"gate", {1, 2, 1, 1}}};
  g.nodes.push_back({"add", "Add", {"x", "r"}, {"s"}, {}});
  g.nodes.push_back({"relu", "Relu", {"s"}, {"a"}, {}});
  g.nodes.push_back({"mul", "Mul", {"a", "gate"}, {"m"}, {}});
  g.nodes.push_back({"sigmoid", "Sigmoid", {"m"}, {"y"}, {}});
  g.outputs = {"a", "y"};  // "a" stays readable: the Relu fuses into the Add all the same
  CompileOptions unfused_options;
  unfused_options.passes.fuse = false;
  auto unfused = compile(g, unfused_options);
  auto fused = compile(g);
  ASSERT_EQ(fused->steps().size(), 2u);
  EXPECT_EQ(fused->steps()[0].facts().details["fused_activation"], "Relu");
  EXPECT_EQ(fused->steps()[1].facts().details["fused_activation"], "Sigmoid");
  EXPECT_EQ(fused->total_cost().flops, unfused->total_cost().flops);
  EXPECT_LT(fused->total_cost().bytes_read, unfused->total_cost().bytes_read);
  const std::vector<float> x = {1, -2, 3, -4, 5, -6}, r = {-3, 1, -1, 5, -6, 2}, gate = {2, -1};
  Session s(fused);
  s.set_input("x", x);
  s.set_input("r", r);
  s.set_input("gate", gate);
  s.run();
  const auto a = s.output("a");
  const auto y = s.output("y");
  const std::vector<float> sum_relu = {0, 0, 2, 1, 0, 0};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(a[i], sum_relu[i]) << i;
    const double m = sum_relu[i] * gate[i / 3];
    EXPECT_NEAR(y[i], 1.0 / (1.0 + std::exp(-m)), 1e-6) << i;
  }
}

TEST(FuseActivations, KeepsActivationsWithOtherReadersOrProducers) {
  Graph g = conv_bn_relu(false);
  g.outputs.push_back("n");  // the BN output is also a graph output: the Relu cannot fuse
  apply(g, fold_batch_norm);
  const PassLog log = apply(g, fuse_activations);
  EXPECT_TRUE(log.actions.empty());
  EXPECT_EQ(g.nodes.size(), 2u);
  Graph pool;
  pool.source = "<pool_relu>";
  pool.inputs.push_back({"x", {1, 2, 4, 4}});
  Node mp{"pool", "MaxPool", {"x"}, {"p"}, {}};
  mp.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.nodes.push_back(mp);
  pool.nodes.push_back({"relu", "Relu", {"p"}, {"y"}, {}});
  pool.outputs = {"y"};
  EXPECT_TRUE(apply(pool, fuse_activations).actions.empty());  // MaxPool has no epilogue
}

const PassLog& pass_named(const CompiledModel& m, const std::string& name) {
  for (const PassLog& p : m.pass_logs())
    if (p.pass == name) return p;
  throw std::logic_error("no pass " + name);
}

// Fusion on the bundled CNNs: the outputs do not change, every activation that alone
// reads a Conv's output goes into that Conv (and the report says so), the FLOPs stay.
TEST(FuseActivations, BundledCnnsKeepOutputsAndFlops) {
  struct Expect {
    const char* model;
    size_t fused;  // the activations after a Conv, by the architecture
    const char* activation;
  };
  // MobileNetV2: ReLU6 after the stem, the 16 expansions, the 17 depthwise convs and the
  // last 1x1 (none after the linear bottlenecks). small_cnn: one Relu per conv.
  for (const Expect& e : {Expect{"mobilenet_v2_1_0.json", 35, "Clip"}, Expect{"small_cnn.json", 2, "Relu"}}) {
    SCOPED_TRACE(e.model);
    Graph g = load_model(std::string(MINFER_SOURCE_DIR) + "/models/" + e.model);
    EXPECT_LT(test::max_rel_error(run_graph(g, true, true), run_graph(g, true, false)), 1e-5);
    // Both without the layout pass: where its regions and Reorders fall depends on what
    // the activations are fused into, and only the fusions' steps are counted below.
    CompileOptions fused_options;
    fused_options.passes.blocked_layout = false;
    CompileOptions unfused_options = fused_options;
    unfused_options.passes.fuse = false;
    auto unfused = compile(g, unfused_options);
    auto fused = compile(g, fused_options);
    const PassLog& log = pass_named(*fused, "fuse");
    EXPECT_EQ(log.actions.size(), e.fused);
    for (const PassAction& a : log.actions) {
      EXPECT_EQ(a.action, "fused");
      const int producer = unfused->step_index(a.nodes[0]);
      ASSERT_GE(producer, 0) << a.nodes[0];
      EXPECT_EQ(unfused->steps()[producer].op_type, "Conv");
      const Step& step = fused->steps()[fused->step_index(a.result)];
      EXPECT_EQ(step.facts().details["fused_activation"], e.activation) << a.result;
    }
    EXPECT_EQ(fused->steps().size() + e.fused + pass_named(*fused, "fuse_residual_add").actions.size(),
              unfused->steps().size());
    EXPECT_EQ(fused->total_cost().flops, unfused->total_cost().flops);
    EXPECT_EQ(fused->total_cost().macs, unfused->total_cost().macs);
    EXPECT_LT(fused->total_cost().bytes_read, unfused->total_cost().bytes_read);
  }
}

const std::string kModels = std::string(MINFER_SOURCE_DIR) + "/models/";

// after - before of one cost field, summed over a pass's actions.
int64_t change(const PassLog& p, int64_t Cost::*field) {
  int64_t sum = 0;
  for (const PassAction& a : p.actions) sum += a.after.*field - a.before.*field;
  return sum;
}

// Each pass's actions are costed on the graph as that pass found and left it, so a BN
// folded and then fused is a fold that removed the BN's cost and a fusion that moved the
// activation's FLOPs, and the passes' changes add up to the model's.
TEST(Passes, EachPassesChangesAddUpOnMobileNetV1) {
  auto model = compile(load_model(kModels + "mobilenet_v1.json"));
  const PassLog& fold = pass_named(*model, "fold_bn");
  ASSERT_EQ(fold.actions.size(), 27u);
  for (size_t i = 0; i < 27; ++i) {
    EXPECT_EQ(fold.actions[i].action, "folded");
    EXPECT_GT(fold.actions[i].after.macs, 0) << fold.actions[i].result;  // the Conv it became
    EXPECT_EQ(fold.actions[i].after.macs, fold.actions[i].before.macs);
  }
  // 2 FLOPs per element of the 27 BN outputs; their 4 statistics per channel go, and each
  // bias-less Conv gains a bias of one per channel.
  EXPECT_EQ(change(fold, &Cost::flops), -10'085'376);
  EXPECT_EQ(change(fold, &Cost::params), -32'832);
  EXPECT_EQ(change(fold, &Cost::macs), 0);

  const PassLog& fuse = pass_named(*model, "fuse");
  ASSERT_EQ(fuse.actions.size(), 27u);
  for (size_t i = 0; i < 27; ++i) {
    EXPECT_EQ(fuse.actions[i].before.macs, fuse.actions[i].after.macs);  // before counts the Conv, not only the Relu
    EXPECT_GT(fuse.actions[i].before.macs, 0) << fuse.actions[i].nodes[0];
  }
  EXPECT_EQ(change(fuse, &Cost::flops), 0);
  EXPECT_EQ(change(fuse, &Cost::params), 0);
  EXPECT_LT(change(fuse, &Cost::bytes_read), 0);

  for (int64_t Cost::*field : {&Cost::macs, &Cost::flops, &Cost::params, &Cost::bytes_read, &Cost::bytes_written}) {
    int64_t sum = 0;
    for (const PassLog& p : model->pass_logs()) sum += change(p, field);
    EXPECT_EQ(sum, model->total_cost().*field - model->cost_before_passes().*field);
  }

  // The JSON report's per-pass figures are the same.
  Session s(model);
  s.run();
  const nlohmann::json by_pass = profile_report(s, 0)["passes"]["by_pass"];
  // eliminate_identities, eliminate_dead_nodes, fold_bn, pool_before_pointwise (its pool reads a Relu),
  // fuse_layer_norm, fuse_gelu, fuse_self_gates, fuse_matmul_bias, fuse,
  // fuse_residual_add, fuse_channel_scale, fuse_pads (MobileNetV1 has no residual, gate or Pad), thread_splits (the 12
  // 1x1 layers each read by a depthwise one: all but the last), blocked_layout (its
  // convolutions are depthwise, stride-1 1x1 and a 3-channel first layer: on either target the 25 from the
  // first 1x1 layer on run in NCHWc, with no Reorder (that 32 -> 64 layer widens a 112x112 plane, so it
  // starts the region reading its NCHW input in place; the global pool reads the last one's NCHWc output:
  // 26 nodes)
  ASSERT_EQ(by_pass.size(), 14u);
  EXPECT_EQ(by_pass[2]["pass"], "fold_bn");
  EXPECT_EQ(by_pass[2]["actions"], 27);
  EXPECT_EQ(by_pass[2]["cost_after"]["flops"].get<int64_t>() - by_pass[2]["cost_before"]["flops"].get<int64_t>(),
            -10'085'376);
  EXPECT_EQ(by_pass[3]["pass"], "pool_before_pointwise");
  EXPECT_EQ(by_pass[3]["actions"], 0);
  EXPECT_EQ(by_pass[4]["pass"], "fuse_layer_norm");
  EXPECT_EQ(by_pass[4]["actions"], 0);
  EXPECT_EQ(by_pass[5]["pass"], "fuse_gelu");
  EXPECT_EQ(by_pass[5]["actions"], 0);
  EXPECT_EQ(by_pass[6]["pass"], "fuse_self_gates");
  EXPECT_EQ(by_pass[6]["actions"], 0);
  EXPECT_EQ(by_pass[7]["pass"], "fuse_matmul_bias");
  EXPECT_EQ(by_pass[7]["actions"], 0);
  EXPECT_EQ(by_pass[8]["pass"], "fuse");
  EXPECT_EQ(by_pass[8]["cost_after"]["flops"], by_pass[8]["cost_before"]["flops"]);
  EXPECT_EQ(by_pass[9]["pass"], "fuse_residual_add");
  EXPECT_EQ(by_pass[9]["actions"], 0);
  EXPECT_EQ(by_pass[10]["pass"], "fuse_channel_scale");
  EXPECT_EQ(by_pass[10]["actions"], 0);
  EXPECT_EQ(by_pass[11]["pass"], "fuse_pads");
  EXPECT_EQ(by_pass[11]["actions"], 0);
  EXPECT_EQ(by_pass[12]["pass"], "thread_splits");
  EXPECT_EQ(by_pass[12]["actions"], 12);
  EXPECT_EQ(by_pass[12]["cost_after"], by_pass[12]["cost_before"]);
  EXPECT_EQ(by_pass[13]["pass"], "blocked_layout");
  EXPECT_EQ(by_pass[13]["actions"], active_isa() == Isa::kScalar ? 0 : 26);
  EXPECT_EQ(by_pass[13]["cost_after"], by_pass[13]["cost_before"]);
}

// The 10,085,376 above, from the BatchNormalization steps of the unfolded model.
TEST(Passes, MobileNetV1BatchNormFlops) {
  CompileOptions unfolded;
  unfolded.passes.fold_bn = false;
  unfolded.passes.fuse = false;  // else each carries its Relu6's FLOPs
  auto model = compile(load_model(kModels + "mobilenet_v1.json"), unfolded);
  int64_t flops = 0, count = 0;
  for (const Step& s : model->steps())
    if (s.op_type == "BatchNormalization") {
      flops += s.cost.flops;
      ++count;
    }
  EXPECT_EQ(count, 27);
  EXPECT_EQ(flops, 10'085'376);
}

// A BN after a BN folds into the same Conv: one action naming all three nodes, costed
// against the graph before the pass.
TEST(FoldBatchNorm, TwoBatchNormsInARowAreOneAction) {
  Graph g = conv_bn_relu(false);
  g.nodes[1].outputs[0] = "n1";
  add_bn(g, "bn2", "n1", "n", 4);
  auto model = compile(g);
  const PassLog& fold = pass_named(*model, "fold_bn");
  ASSERT_EQ(fold.actions.size(), 1u);
  EXPECT_EQ(fold.actions[0].nodes, (std::vector<std::string>{"conv", "bn", "bn2"}));
  EXPECT_EQ(fold.actions[0].result, "conv+bn+bn2");
  EXPECT_EQ(change(fold, &Cost::flops), -2 * (2 * 2 * 4 * 7 * 7));
  EXPECT_EQ(model->steps()[0].name, "conv+bn+bn2+relu");
  EXPECT_LT(test::max_rel_error(run_graph(g, true), run_graph(g, false)), 1e-5);
}

// A producer whose output is a graph output keeps it: no BN folds into it and no
// activation fuses into it, or the graph output's value would change.
TEST(Passes, NothingMergesIntoAProducerOfAGraphOutput) {
  Graph g = conv_bn_relu(true);
  g.outputs = {"c", "y"};  // the Conv's own output, before the BN
  Graph folded = g;
  const PassLog fold = apply(folded, fold_batch_norm);
  ASSERT_EQ(fold.actions.size(), 1u);
  EXPECT_EQ(fold.actions[0].action, "kept");
  EXPECT_EQ(fold.actions[0].reason, "the output of 'conv' is a graph output");
  EXPECT_EQ(folded.nodes.size(), 3u);
  Graph conv_relu = g;
  conv_relu.nodes.erase(conv_relu.nodes.begin() + 1);  // conv -> relu
  conv_relu.nodes[1].inputs[0] = "c";
  EXPECT_TRUE(apply(conv_relu, fuse_activations).actions.empty());
  EXPECT_EQ(conv_relu.nodes.size(), 2u);
  CompileOptions off;
  off.passes = {false, false, false};
  for (const Graph& graph : {g, conv_relu}) {
    auto with = compile(graph), without = compile(graph, off);
    for (const std::string& name : graph.outputs) {
      Session a(with), b(without);
      cli::fill_inputs_deterministic(a);
      cli::fill_inputs_deterministic(b);
      a.run();
      b.run();
      auto x = a.output(name), y = b.output(name);
      EXPECT_EQ(std::vector<float>(x.begin(), x.end()), std::vector<float>(y.begin(), y.end())) << name;
    }
  }
}

// Identities listed after their readers, and a dead chain listed backwards: the passes
// see the nodes in execution order (the compile graph sorts them), log their decisions
// in that order and leave the same graph.
TEST(Passes, IdentitiesAndDeadNodesInAnyOrder) {
  Graph g;
  g.source = "<order>";
  g.inputs.push_back({"x", {4}});
  g.nodes.push_back({"id3", "Identity", {"t2"}, {"y"}, {}});
  g.nodes.push_back({"id2", "Identity", {"t1"}, {"t2"}, {}});
  g.nodes.push_back({"relu", "Relu", {"t0"}, {"t1"}, {}});
  g.nodes.push_back({"id1", "Identity", {"x"}, {"t0"}, {}});
  g.nodes.push_back({"dead2", "Relu", {"d1"}, {"d2"}, {}});
  g.nodes.push_back({"dead1", "Relu", {"t1"}, {"d1"}, {}});
  g.nodes.push_back({"dead3", "Relu", {"x"}, {"d3"}, {}});
  g.outputs = {"y"};
  PassLog log = apply(g, eliminate_identities);
  ASSERT_EQ(log.actions.size(), 3u);
  EXPECT_EQ(log.actions[0].nodes[0], "id1");
  EXPECT_EQ(log.actions[2].nodes[0], "id3");
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[0].name, "relu");
  EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(g.nodes[1].inputs, std::vector<std::string>{"y"});  // dead1 reads what relu writes
  log = apply(g, eliminate_dead_nodes);
  ASSERT_EQ(log.actions.size(), 3u);
  EXPECT_EQ(log.actions[0].nodes[0], "dead3");  // the last-listed dead node first
  EXPECT_EQ(log.actions[1].nodes[0], "dead2");
  EXPECT_EQ(log.actions[2].nodes[0], "dead1");  // dead once dead2 has gone
  EXPECT_EQ(g.nodes.size(), 1u);
}

// x -> LayerNorm decomposed as torch exports it at opset 13 over the last axis -> y, and
// a second one whose means reduce axis 1 (not the trailing axes): only the first fuses,
// into one LayerNormalization with the same output, FLOPs and fewer bytes.
Graph decomposed_layer_norms() {
  Graph g;
  g.source = "<layer_norm>";
  g.inputs.push_back({"x", {2, 5, 8}});
  g.initializers["two"] = Tensor(Shape{}, std::vector<float>{2.0f});
  g.initializers["eps"] = Tensor(Shape{}, std::vector<float>{1e-5f});
  g.initializers["gamma"] = tensor({8}, 51, 0.5f, 1.5f);
  g.initializers["beta"] = tensor({8}, 52);
  auto add_chain = [&](const std::string& p, const std::string& in, const std::string& out, int64_t axis) {
    Node mean{p + "mean", "ReduceMean", {in}, {p + "m"}, {}};
    mean.attrs.set("axes", std::vector<int64_t>{axis});
    Node var = mean;
    var.name = p + "var", var.inputs = {p + "sq"}, var.outputs = {p + "v"};
    g.nodes.push_back(mean);
    g.nodes.push_back({p + "sub", "Sub", {in, p + "m"}, {p + "d"}, {}});
    g.nodes.push_back({p + "pow", "Pow", {p + "d", "two"}, {p + "sq"}, {}});
    g.nodes.push_back(var);
    g.nodes.push_back({p + "add", "Add", {p + "v", "eps"}, {p + "ve"}, {}});
    g.nodes.push_back({p + "sqrt", "Sqrt", {p + "ve"}, {p + "s"}, {}});
    g.nodes.push_back({p + "div", "Div", {p + "d", p + "s"}, {p + "n"}, {}});
    g.nodes.push_back({p + "mul", "Mul", {p + "n", "gamma"}, {p + "g"}, {}});
    g.nodes.push_back({p + "bias", "Add", {"beta", p + "g"}, {out}, {}});
  };
  add_chain("a_", "x", "h", -1);
  add_chain("b_", "h", "y", 1);
  g.outputs = {"y"};
  return g;
}

TEST(FuseLayerNorm, DecomposedFormBecomesOneOp) {
  const Graph g = decomposed_layer_norms();
  const std::vector<float> before = run_graph(g, true, false);
  Graph rewritten = g;
  PassLog log = apply(rewritten, fuse_layer_norm);
  ASSERT_EQ(log.actions.size(), 1u);
  const PassAction& a = log.actions[0];
  EXPECT_EQ(a.result, "a_mean+a_bias");
  EXPECT_EQ(a.nodes.size(), 9u);
  EXPECT_EQ(a.op_type, "LayerNormalization part");
  // The same FLOPs: 7 per element of 2x5x8 and 2 per row of 10; x is read once instead
  // of twice and the eight intermediates (five of x's size, three of a row's) go.
  EXPECT_EQ(a.before.flops, 7 * 80 + 2 * 10);
  EXPECT_EQ(a.after.flops, a.before.flops);
  EXPECT_EQ(a.after.bytes_read, 4 * (80 + 8 + 8));
  EXPECT_EQ(a.after.bytes_written, 4 * 80);
  ASSERT_EQ(rewritten.nodes.size(), 1u + 9u);
  const Node& ln = rewritten.nodes[0];
  EXPECT_EQ(ln.op_type, "LayerNormalization");
  EXPECT_EQ(ln.inputs, (std::vector<std::string>{"x", "gamma", "beta"}));
  EXPECT_EQ(ln.outputs, std::vector<std::string>{"h"});
  EXPECT_EQ(ln.attrs.get_int("axis", 0), 2);
  EXPECT_FLOAT_EQ(static_cast<float>(ln.attrs.get_float("epsilon", 0)), 1e-5f);
  EXPECT_LT(test::max_rel_error(run_graph(rewritten, true, false), before), 1e-5);
  EXPECT_LT(test::max_rel_error(run_graph(g, true, true), before), 1e-5);
}

// The centred x read by a third node keeps the pattern as it is.
TEST(FuseLayerNorm, SharedIntermediateStays) {
  Graph g = decomposed_layer_norms();
  g.outputs.push_back("a_d");
  EXPECT_TRUE(apply(g, fuse_layer_norm).actions.empty());
}

// Gemm -> x * (1 + Erf(x / sqrt 2)) * 0.5: the five nodes become one Gelu, which then
// fuses into the Gemm's epilogue; outputs unchanged, FLOPs 5 per element either way.
TEST(FuseGelu, DecomposedFormBecomesGeluInTheEpilogue) {
  Graph g;
  g.source = "<gelu>";
  g.inputs.push_back({"a", {4, 8}});
  g.initializers["w"] = tensor({8, 6}, 54);
  g.initializers["sqrt2"] = Tensor(Shape{}, std::vector<float>{1.41421354f});
  g.initializers["one"] = Tensor(Shape{}, std::vector<float>{1.0f});
  g.initializers["half"] = Tensor(Shape{}, std::vector<float>{0.5f});
  g.nodes.push_back({"gemm", "Gemm", {"a", "w"}, {"x"}, {}});
  g.nodes.push_back({"div", "Div", {"x", "sqrt2"}, {"s"}, {}});
  g.nodes.push_back({"erf", "Erf", {"s"}, {"e"}, {}});
  g.nodes.push_back({"add", "Add", {"one", "e"}, {"p"}, {}});
  g.nodes.push_back({"mul", "Mul", {"x", "p"}, {"q"}, {}});
  g.nodes.push_back({"half", "Mul", {"q", "half"}, {"y"}, {}});
  g.outputs = {"y"};
  const std::vector<float> before = run_graph(g, true, false);
  Graph rewritten = g;
  PassLog log = apply(rewritten, fuse_gelu);
  ASSERT_EQ(log.actions.size(), 1u);
  EXPECT_EQ(log.actions[0].result, "div+half");
  EXPECT_EQ(log.actions[0].before.flops, 5 * 24);
  EXPECT_EQ(log.actions[0].after.flops, 5 * 24);
  ASSERT_EQ(rewritten.nodes.size(), 2u);
  EXPECT_EQ(rewritten.nodes[1].op_type, "Gelu");
  EXPECT_EQ(rewritten.nodes[1].inputs, std::vector<std::string>{"x"});
  EXPECT_LT(test::max_rel_error(run_graph(rewritten, true, false), before), 1e-6);
  auto model = compile(g);
  ASSERT_EQ(model->steps().size(), 1u);
  EXPECT_EQ(model->steps()[0].facts().details["fused_activation"], "Gelu");
  EXPECT_LT(test::max_rel_error(run_graph(g, true, true), before), 1e-6);
  // A constant other than 0.5 is another function: nothing fuses.
  g.initializers["half"] = Tensor(Shape{}, std::vector<float>{0.4f});
  EXPECT_TRUE(apply(g, fuse_gelu).actions.empty());
}

// x -> conv_a (1x1, bias) -> conv_b (3x3, no bias) -> Add(conv_b, x) -> Relu: the Add
// and its Relu go into conv_b, whose epilogue sums x; the values, MACs and FLOPs stay,
// the Conv output's write and read go.
Graph residual_block() {
  Graph g;
  g.source = "<residual_block>";
  g.inputs.push_back({"x", {2, 16, 6, 6}});
  g.initializers["wa"] = tensor({16, 16, 1, 1}, 41);
  g.initializers["ba"] = tensor({16}, 42);
  g.initializers["wb"] = tensor({16, 16, 3, 3}, 43);
  g.nodes.push_back({"conv_a", "Conv", {"x", "wa", "ba"}, {"a"}, {}});
  Node conv_b{"conv_b", "Conv", {"a", "wb"}, {"b"}, {}};
  conv_b.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  g.nodes.push_back(conv_b);
  g.nodes.push_back({"add", "Add", {"b", "x"}, {"s"}, {}});
  g.nodes.push_back({"relu", "Relu", {"s"}, {"y"}, {}});
  g.outputs = {"y"};
  return g;
}

TEST(FuseResidualAdd, ResidualBlockBecomesConvPlusAddPlusRelu) {
  Graph g = residual_block();
  CompileOptions unfused_options;
  unfused_options.passes.fuse = false;
  auto unfused = compile(g, unfused_options);
  auto fused = compile(g);
  const PassLog& log = pass_named(*fused, "fuse_residual_add");
  ASSERT_EQ(log.actions.size(), 1u);
  EXPECT_EQ(log.actions[0].result, "conv_b+add+relu");
  EXPECT_EQ(log.actions[0].before.flops, log.actions[0].after.flops);
  EXPECT_EQ(log.actions[0].before.bytes_written - log.actions[0].after.bytes_written, 4 * 2 * 16 * 36);
  ASSERT_EQ(fused->steps().size(), 2u);
  const nlohmann::json& d = fused->steps()[1].facts().details;
  EXPECT_EQ(d["fused_activation"], "Relu");
  EXPECT_TRUE(d.contains("fused_residual"));
  EXPECT_EQ(fused->total_cost().flops, unfused->total_cost().flops);
  EXPECT_EQ(fused->total_cost().macs, unfused->total_cost().macs);
  EXPECT_LT(fused->total_cost().bytes_read, unfused->total_cost().bytes_read);
  // The sum is the Add's: conv + bias first, then the residual, then the Relu.
  EXPECT_EQ(run_graph(g, true, true), run_graph(g, true, false));
}

// A downsampling block: Add(conv3, shortcut) with the shortcut Conv after conv3 in the
// node order. The sum goes into the shortcut Conv, which runs after conv3's output exists.
TEST(FuseResidualAdd, TheLaterConvTakesTheSum) {
  Graph g;
  g.source = "<downsample_block>";
  g.inputs.push_back({"x", {1, 8, 6, 6}});
  g.initializers["w3"] = tensor({16, 8, 1, 1}, 51);
  g.initializers["wd"] = tensor({16, 8, 1, 1}, 52);
  g.nodes.push_back({"conv3", "Conv", {"x", "w3"}, {"c"}, {}});
  g.nodes.push_back({"down", "Conv", {"x", "wd"}, {"d"}, {}});
  g.nodes.push_back({"add", "Add", {"c", "d"}, {"y"}, {}});
  g.outputs = {"y"};
  Graph rewritten = g;
  const PassLog log = apply(rewritten, fuse_residual_add);
  ASSERT_EQ(log.actions.size(), 1u);
  EXPECT_EQ(log.actions[0].result, "down+add");
  ASSERT_EQ(rewritten.nodes.size(), 2u);
  EXPECT_EQ(rewritten.nodes[1].inputs, (std::vector<std::string>{"x", "wd", "", "c"}));
  EXPECT_EQ(run_graph(g, true, true), run_graph(g, true, false));
}

TEST(FuseResidualAdd, KeepsWhatCannotBeFused) {
  auto block = [](const std::function<void(Graph&)>& change) {
    Graph g = residual_block();
    change(g);
    return apply(g, fuse_residual_add).actions.size();
  };
  EXPECT_EQ(block([](Graph&) {}), 1u);
  // The Conv runs an activation of its own: the sum would come after it.
  EXPECT_EQ(block([](Graph& g) { g.nodes[1].attrs.set("activation", std::string("Relu")); }), 0u);
  // The Conv's output is read elsewhere too.
  EXPECT_EQ(block([](Graph& g) { g.outputs.push_back("b"); }), 0u);
  // A broadcasting Add (a per-channel term, not a residual).
  EXPECT_EQ(block([](Graph& g) {
              g.initializers["t"] = tensor({1, 16, 1, 1}, 44);
              g.nodes[2].inputs[1] = "t";
            }),
            0u);
  // The other operand is produced after the Conv (and is no Conv's output itself).
  EXPECT_EQ(block([](Graph& g) {
              g.nodes.insert(g.nodes.begin() + 2, Node{"neg", "Neg", {"x"}, {"n"}, {}});
              g.nodes[3].inputs[1] = "n";
            }),
            0u);
}

// A squeeze-and-excitation block on two images (each its own gate): x -> GlobalAveragePool
// -> Conv -> Relu -> Conv -> Sigmoid = gate [2, 24, 1, 1]; Mul(x, gate) -> a 1x1 Conv.
Graph squeeze_excitation_block() {
  Graph g;
  g.source = "<se_block>";
  g.inputs.push_back({"x", {2, 24, 5, 7}});
  g.initializers["w1"] = tensor({6, 24, 1, 1}, 61);
  g.initializers["w2"] = tensor({24, 6, 1, 1}, 62);
  g.initializers["b2"] = tensor({24}, 63);
  g.initializers["wp"] = tensor({16, 24, 1, 1}, 64);
  g.initializers["bp"] = tensor({16}, 65);
  g.nodes.push_back({"pool", "GlobalAveragePool", {"x"}, {"p"}, {}});
  g.nodes.push_back({"fc1", "Conv", {"p", "w1"}, {"f1"}, {}});
  g.nodes.push_back({"relu", "Relu", {"f1"}, {"r"}, {}});
  g.nodes.push_back({"fc2", "Conv", {"r", "w2", "b2"}, {"f2"}, {}});
  g.nodes.push_back({"gate", "Sigmoid", {"f2"}, {"s"}, {}});
  g.nodes.push_back({"scale", "Mul", {"x", "s"}, {"xs"}, {}});
  g.nodes.push_back({"project", "Conv", {"xs", "wp", "bp"}, {"y"}, {}});
  g.outputs = {"y"};
  return g;
}

TEST(FuseChannelScale, GateGoesIntoTheProjectingConv) {
  Graph g = squeeze_excitation_block();
  CompileOptions unfused_options;
  unfused_options.passes.fuse = false;
  auto unfused = compile(g, unfused_options);
  auto fused = compile(g);
  const PassLog& log = pass_named(*fused, "fuse_channel_scale");
  ASSERT_EQ(log.actions.size(), 1u);
  EXPECT_EQ(log.actions[0].result, "scale+project");
  EXPECT_EQ(log.actions[0].before.flops, log.actions[0].after.flops);  // the Conv counts the Mul's multiplies
  // Saved: the product's write and its reading back.
  EXPECT_EQ(log.actions[0].before.bytes_written - log.actions[0].after.bytes_written, 4 * 2 * 24 * 35);
  EXPECT_EQ(fused->total_cost().flops, unfused->total_cost().flops);
  EXPECT_EQ(fused->total_cost().macs, unfused->total_cost().macs);
  const nlohmann::json& d = fused->steps().back().facts().details;
  EXPECT_TRUE(d["kernel"].get<std::string>().starts_with("pointwise_"));  // the GEMM, or direct on AVX2
  EXPECT_TRUE(d.contains("fused_input_scale"));
  // Each x * s rounded once, as the Mul rounds it: the same bits.
  EXPECT_EQ(run_graph(g, true, true), run_graph(g, true, false));
  // The gate on either side of the Mul.
  std::swap(g.nodes[5].inputs[0], g.nodes[5].inputs[1]);
  Graph swapped = g;
  ASSERT_EQ(apply(swapped, fuse_channel_scale).actions.size(), 1u);
  EXPECT_EQ(swapped.nodes.back().inputs, (std::vector<std::string>{"x", "wp", "bp", "", "s"}));
  EXPECT_EQ(run_graph(g, true, true), run_graph(g, true, false));
}

// Wherever the kernel scales the input (the GEMM's packing, or a copy of the input when the
// pixels are the GEMM's rows), the bits are the unfused graph's; where the direct
// pointwise kernel folds the scale into its weights, each product rounds as (w s) x, not
// w (x s): within rounding of them.
TEST(FuseChannelScale, EveryConvShapeGivesTheUnfusedBits) {
  for (const Shape& x : {Shape{1, 64, 2, 2}, Shape{2, 24, 5, 7}, Shape{1, 32, 30, 30}}) {
    for (int64_t stride : {1, 2}) {
      Graph g = squeeze_excitation_block();
      g.inputs[0].shape = x;
      g.initializers["w1"] = tensor({6, x[1], 1, 1}, 61);
      g.initializers["w2"] = tensor({x[1], 6, 1, 1}, 62);
      g.initializers["b2"] = tensor({x[1]}, 63);
      g.initializers["wp"] = tensor({16, x[1], 1, 1}, 64);
      g.nodes.back().attrs.set("strides", std::vector<int64_t>{stride, stride});
      auto fused = compile(g);
      ASSERT_EQ(pass_named(*fused, "fuse_channel_scale").actions.size(), 1u);
      const nlohmann::json& d = fused->steps().back().facts().details;
      SCOPED_TRACE(d.dump());
      const std::vector<float> with = run_graph(g, true, true), without = run_graph(g, true, false);
      if (d["fused_input_scale"] == "folded into the weights per image")
        EXPECT_LT(test::max_rel_error(with, without), 1e-6) << shape_str(x) << " stride " << stride;
      else
        EXPECT_EQ(with, without) << shape_str(x) << " stride " << stride;
    }
  }
}

TEST(FuseChannelScale, KeepsWhatCannotBeFused) {
  auto block = [](const std::function<void(Graph&)>& change) {
    Graph g = squeeze_excitation_block();
    change(g);
    return apply(g, fuse_channel_scale).actions.size();
  };
  EXPECT_EQ(block([](Graph&) {}), 1u);
  // The product is read elsewhere too.
  EXPECT_EQ(block([](Graph& g) { g.outputs.push_back("xs"); }), 0u);
  // The Conv reading it is not 1x1.
  EXPECT_EQ(block([](Graph& g) {
              g.initializers["wp"] = tensor({16, 24, 3, 3}, 66);
              g.nodes.back().attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
            }),
            0u);
  // A factor per channel and row: no per-channel scale.
  EXPECT_EQ(block([](Graph& g) {
              g.initializers["t"] = tensor({2, 24, 5, 1}, 67);
              g.nodes[5].inputs[1] = "t";
            }),
            0u);
  // Two full tensors multiplied.
  EXPECT_EQ(block([](Graph& g) { g.nodes[5].inputs[1] = "x"; }), 0u);
  // One factor for both images ([1, C, 1, 1] broadcast over the batch): not per image.
  EXPECT_EQ(block([](Graph& g) {
              g.initializers["t"] = tensor({1, 24, 1, 1}, 68);
              g.nodes[5].inputs[1] = "t";
            }),
            0u);
  // The product is the Conv's weights, not its data.
  EXPECT_EQ(block([](Graph& g) {
              g.inputs[0].shape = {16, 24, 1, 1};
              g.inputs.push_back({"d", {1, 24, 3, 3}});
              g.nodes.back().inputs = {"d", "xs"};
            }),
            0u);
}

// x [2, 8, 9, 9] -> Pad (H by 1 and 2, W by 2 and 1) -> AveragePool 3x3, and the same
// padded by another Pad into a 3x3 Conv with pads of its own.
Graph padded_pool_and_conv() {
  Graph g;
  g.source = "<padded_pool_and_conv>";
  g.inputs.push_back({"x", {2, 8, 9, 9}});
  g.initializers["pads"] = Tensor(Shape{8}, std::vector<int64_t>{0, 0, 1, 2, 0, 0, 2, 1});
  g.initializers["w"] = tensor({4, 8, 3, 3}, 61);
  g.nodes.push_back({"pad_a", "Pad", {"x", "pads"}, {"pa"}, {}});
  Node pool{"pool", "AveragePool", {"pa"}, {"y"}, {}};
  pool.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  g.nodes.push_back(pool);
  g.nodes.push_back({"pad_b", "Pad", {"x", "pads"}, {"pb"}, {}});
  Node conv{"conv", "Conv", {"pb", "w"}, {"z"}, {}};
  conv.attrs.set("pads", std::vector<int64_t>{1, 0, 0, 1});
  g.nodes.push_back(conv);
  g.outputs = {"y", "z"};
  return g;
}

std::vector<std::vector<float>> run_outputs(Graph g, bool fuse) {
  CompileOptions o;
  o.passes.fuse = fuse;
  auto model = compile(std::move(g), o);
  Session s(model);
  cli::fill_inputs_deterministic(s);
  s.run();
  std::vector<std::vector<float>> outs;
  for (const std::string& name : model->graph().outputs) {
    auto out = s.output(name);
    outs.emplace_back(out.begin(), out.end());
  }
  return outs;
}

TEST(FusePads, ZeroPadsBecomeThePoolsAndTheConvsOwn) {
  const Graph g = padded_pool_and_conv();
  Graph rewritten = g;
  const PassLog log = apply(rewritten, fuse_pads);
  ASSERT_EQ(log.actions.size(), 2u);
  EXPECT_EQ(log.actions[0].result, "pad_a+pool");
  EXPECT_EQ(log.actions[1].result, "pad_b+conv");
  EXPECT_EQ(log.actions[1].before.macs, log.actions[1].after.macs);
  ASSERT_EQ(rewritten.nodes.size(), 2u);
  EXPECT_EQ(rewritten.nodes[0].inputs[0], "x");
  EXPECT_EQ(rewritten.nodes[0].attrs.get_ints("pads"), (std::vector<int64_t>{1, 2, 2, 1}));
  EXPECT_EQ(rewritten.nodes[0].attrs.get_int("count_include_pad", 0), 1);
  EXPECT_EQ(rewritten.nodes[1].attrs.get_ints("pads"), (std::vector<int64_t>{2, 2, 2, 2}));
  // The pool's sums skip the zeros they added and divide by the same 9: the same bits.
  const auto fused = run_outputs(g, true), unfused = run_outputs(g, false);
  EXPECT_EQ(fused[0], unfused[0]);
  ASSERT_EQ(fused[1].size(), unfused[1].size());
  for (size_t i = 0; i < fused[1].size(); ++i) EXPECT_NEAR(fused[1][i], unfused[1][i], 1e-5) << i;
}

// In ceil mode a pool drops a last window that starts in its own end padding but not one
// that starts in a Pad's zeros (PyTorch 1.13 exports AvgPool2d(padding=1, ceil_mode=True)
// so): the Pad is kept where fusing would drop a row, fused where the size holds.
TEST(FusePads, CeilModePoolsKeepTheirOutputSize) {
  auto pool_graph = [](int64_t stride) {
    Graph g = padded_pool_and_conv();  // x 9x9, the Pad adds rows 1 above, 2 below
    g.nodes.resize(2);
    g.outputs = {"y"};
    g.nodes[1].attrs.set("strides", std::vector<int64_t>{stride, stride});
    g.nodes[1].attrs.set("ceil_mode", int64_t{1});
    return g;
  };
  // Stride 2: the padded 12 rows give 6 windows; the last starts at row 10, in the Pad's
  // zeros below the 9 rows and its 1 above, so fused it would be dropped.
  Graph kept = pool_graph(2);
  EXPECT_EQ(apply(kept, fuse_pads).actions.size(), 0u);
  EXPECT_EQ(run_outputs(pool_graph(2), true)[0].size(), 2u * 8 * 6 * 6);
  // Stride 3: the last of 4 windows starts at row 9, inside the padded input either way.
  Graph merged = pool_graph(3);
  EXPECT_EQ(apply(merged, fuse_pads).actions.size(), 1u);
  EXPECT_EQ(run_outputs(pool_graph(3), true), run_outputs(pool_graph(3), false));
}

TEST(FusePads, KeepsWhatCannotBeFused) {
  auto fused = [](const std::function<void(Graph&)>& change) {
    Graph g = padded_pool_and_conv();
    change(g);
    return apply(g, fuse_pads).actions.size();
  };
  EXPECT_EQ(fused([](Graph&) {}), 2u);
  // Padding with another value, or with -0.
  EXPECT_EQ(fused([](Graph& g) {
              for (const char* value : {"v"}) {
                g.initializers[value] = Tensor(Shape{}, std::vector<float>{0.5f});
                for (int k : {0, 2}) g.nodes[k].inputs.push_back(value);
              }
            }),
            0u);
  EXPECT_EQ(fused([](Graph& g) {
              g.initializers["v"] = Tensor(Shape{}, std::vector<float>{-0.0f});
              for (int k : {0, 2}) g.nodes[k].inputs.push_back("v");
            }),
            0u);
  // Pads on the batch axis, or negative ones (a crop).
  EXPECT_EQ(fused([](Graph& g) {
              g.initializers["pads"] = Tensor(Shape{8}, std::vector<int64_t>{1, 0, 1, 2, 0, 0, 2, 1});
            }),
            0u);
  EXPECT_EQ(fused([](Graph& g) {
              g.initializers["pads"] = Tensor(Shape{8}, std::vector<int64_t>{0, 0, -1, 2, 0, 0, 2, 1});
            }),
            0u);
  // Reflect mode.
  EXPECT_EQ(fused([](Graph& g) { g.nodes[0].attrs.set("mode", std::string("reflect")); }), 1u);
  // A pool that pads itself without counting it; a reader with auto_pad; a MaxPool.
  EXPECT_EQ(fused([](Graph& g) { g.nodes[1].attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1}); }), 1u);
  EXPECT_EQ(fused([](Graph& g) {
              g.nodes[3].attrs = {};
              g.nodes[3].attrs.set("auto_pad", std::string("SAME_UPPER"));
            }),
            1u);
  EXPECT_EQ(fused([](Graph& g) { g.nodes[1].op_type = "MaxPool"; }), 1u);
  // A Pad as wide as the pool's window (2 rows below a 2x2 one): the pool refuses such pads.
  EXPECT_EQ(fused([](Graph& g) { g.nodes[1].attrs.set("kernel_shape", std::vector<int64_t>{2, 2}); }), 1u);
  // The padded tensor read elsewhere too.
  EXPECT_EQ(fused([](Graph& g) { g.outputs.push_back("pa"); }), 1u);
}

// A linear layer as torch exports it on a 4-D tensor: x [2, 3, 5, 8] -> MatMul by w [8, 6]
// -> Add b [6] -> Relu -> y.
Graph linear_layer() {
  Graph g;
  g.source = "<linear_layer>";
  g.inputs.push_back({"x", {2, 3, 5, 8}});
  g.initializers["w"] = tensor({8, 6}, 71);
  g.initializers["b"] = tensor({6}, 72);
  g.nodes.push_back({"matmul", "MatMul", {"x", "w"}, {"p"}, {}});
  g.nodes.push_back({"add", "Add", {"b", "p"}, {"s"}, {}});
  g.nodes.push_back({"relu", "Relu", {"s"}, {"y"}, {}});
  g.outputs = {"y"};
  return g;
}

TEST(FuseMatMulBias, LinearLayerBecomesOneNodeWithTheSameCost) {
  const Graph g = linear_layer();
  CompileOptions unfused_options;
  unfused_options.passes.fuse = false;
  auto unfused = compile(g, unfused_options);
  auto fused = compile(g);
  const PassLog& log = pass_named(*fused, "fuse_matmul_bias");
  ASSERT_EQ(log.actions.size(), 1u);
  EXPECT_EQ(log.actions[0].result, "matmul+add");
  EXPECT_EQ(log.actions[0].before.flops, log.actions[0].after.flops);
  EXPECT_EQ(log.actions[0].before.bytes_written - log.actions[0].after.bytes_written, 4 * 2 * 3 * 5 * 6);
  ASSERT_EQ(fused->steps().size(), 1u);
  EXPECT_EQ(fused->steps()[0].facts().details["fused_activation"], "Relu");
  EXPECT_EQ(fused->total_cost().flops, unfused->total_cost().flops);
  EXPECT_EQ(fused->total_cost().macs, unfused->total_cost().macs);
  // The epilogue adds the bias to each finished sum, as the Add does: the same bits.
  EXPECT_EQ(run_graph(g, true, true), run_graph(g, true, false));
}

TEST(FuseMatMulBias, KeepsWhatCannotBeFused) {
  auto fused = [](const std::function<void(Graph&)>& change) {
    Graph g = linear_layer();
    change(g);
    return apply(g, fuse_matmul_bias).actions.size();
  };
  EXPECT_EQ(fused([](Graph&) {}), 1u);
  // A bias that broadcasts the product to a higher rank, or varies along rows.
  EXPECT_EQ(fused([](Graph& g) { g.initializers["b"] = tensor({1, 1, 1, 1, 6}, 73); }), 0u);
  EXPECT_EQ(fused([](Graph& g) { g.initializers["b"] = tensor({5, 6}, 73); }), 0u);
  // A bias computed at run time; a product read elsewhere too.
  EXPECT_EQ(fused([](Graph& g) {
              g.inputs.push_back({"b_in", {6}});
              g.nodes[1].inputs[0] = "b_in";
            }),
            0u);
  EXPECT_EQ(fused([](Graph& g) { g.outputs.push_back("p"); }), 0u);
}

// x [2, 8, 9, 9] -> Conv 1x1 (8 -> 4, bias) -> c -> AveragePool 2x2 stride 2 -> y [2, 4, 4, 4].
Graph pointwise_then_pool() {
  Graph g;
  g.source = "<pointwise_then_pool>";
  g.inputs.push_back({"x", {2, 8, 9, 9}});
  g.initializers["w"] = tensor({4, 8, 1, 1}, 71);
  g.initializers["b"] = tensor({4}, 72);
  g.nodes.push_back({"conv", "Conv", {"x", "w", "b"}, {"c"}, {}});
  Node pool{"pool", "AveragePool", {"c"}, {"y"}, {}};
  pool.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.attrs.set("strides", std::vector<int64_t>{2, 2});
  g.nodes.push_back(pool);
  g.outputs = {"y"};
  return g;
}

TEST(PoolBeforePointwise, TheConvRunsOnThePooledPixels) {
  const Graph g = pointwise_then_pool();
  Graph rewritten = g;
  const PassLog log = apply(rewritten, pool_before_pointwise);
  ASSERT_EQ(log.actions.size(), 1u);
  EXPECT_EQ(log.actions[0].action, "swapped");
  // N x C_out x C_in x pixels: 81 pixels before, the pooled 16 after (the last row and
  // column, which no window reads, dropped by the pool first).
  EXPECT_EQ(log.actions[0].before.macs, 2 * 4 * 8 * 81);
  EXPECT_EQ(log.actions[0].after.macs, 2 * 4 * 8 * 16);
  ASSERT_EQ(rewritten.nodes.size(), 2u);
  EXPECT_EQ(rewritten.nodes[0].op_type, "AveragePool");
  EXPECT_EQ(rewritten.nodes[0].name, "pool");
  EXPECT_EQ(rewritten.nodes[0].inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(rewritten.nodes[1].op_type, "Conv");
  EXPECT_EQ(rewritten.nodes[1].name, "conv");
  EXPECT_EQ(rewritten.nodes[1].inputs[0], rewritten.nodes[0].outputs[0]);
  EXPECT_EQ(rewritten.nodes[1].outputs, (std::vector<std::string>{"y"}));
  // A mean of affine maps is the affine map of the mean: the same values, rounded in
  // another order.
  const auto swapped = run_outputs(g, true), kept = run_outputs(g, false);
  ASSERT_EQ(swapped[0].size(), 2u * 4 * 4 * 4);
  ASSERT_EQ(swapped[0].size(), kept[0].size());
  for (size_t i = 0; i < kept[0].size(); ++i) EXPECT_NEAR(swapped[0][i], kept[0][i], 1e-5) << i;
}

TEST(PoolBeforePointwise, KeepsWhatCannotSwap) {
  auto swapped = [](const std::function<void(Graph&)>& change) {
    Graph g = pointwise_then_pool();
    change(g);
    return apply(g, pool_before_pointwise).actions.size();
  };
  EXPECT_EQ(swapped([](Graph&) {}), 1u);
  // A pool of every pixel: nothing to save.
  EXPECT_EQ(swapped([](Graph& g) {
              g.nodes[1].attrs.set("kernel_shape", std::vector<int64_t>{1, 1});
              g.nodes[1].attrs.set("strides", std::vector<int64_t>{1, 1});
            }),
            0u);
  // A padded pool (a divisor that counts the padding, or windows of fewer values), one in
  // ceil mode (a last window past the edge).
  for (int64_t include : {0, 1})
    EXPECT_EQ(swapped([&](Graph& g) {
                g.nodes[1].attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
                g.nodes[1].attrs.set("count_include_pad", include);
              }),
              0u);
  EXPECT_EQ(swapped([](Graph& g) { g.nodes[1].attrs.set("ceil_mode", int64_t{1}); }), 0u);
  // A window wider than 1x1, a stride, padding on the Conv.
  EXPECT_EQ(swapped([](Graph& g) {
              g.initializers["w"] = tensor({4, 8, 3, 3}, 73);
              g.nodes[0].attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
            }),
            0u);
  EXPECT_EQ(swapped([](Graph& g) { g.nodes[0].attrs.set("strides", std::vector<int64_t>{2, 2}); }), 0u);
  EXPECT_EQ(swapped([](Graph& g) { g.nodes[0].attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1}); }), 0u);
  // An activation after the Conv (fused into it or its own node), another reader of its
  // output, its output a graph output.
  EXPECT_EQ(swapped([](Graph& g) { g.nodes[0].attrs.set("activation", std::string("Relu")); }), 0u);
  EXPECT_EQ(swapped([](Graph& g) {
              g.nodes[0].outputs = {"c0"};
              g.nodes.insert(g.nodes.begin() + 1, Node{"relu", "Relu", {"c0"}, {"c"}, {}});
            }),
            0u);
  EXPECT_EQ(swapped([](Graph& g) {
              g.nodes.push_back({"relu", "Relu", {"c"}, {"z"}, {}});
              g.outputs.push_back("z");
            }),
            0u);
  EXPECT_EQ(swapped([](Graph& g) { g.outputs.push_back("c"); }), 0u);
  // A max pool does not commute with the Conv.
  EXPECT_EQ(swapped([](Graph& g) { g.nodes[1].op_type = "MaxPool"; }), 0u);
}

// DenseNet-121's first transition (models/densenet_transition.json): the report counts one
// Conv swapped, and the MACs the swap saves, 256 x 128 x (56x56 - 28x28), hand-counted.
TEST(PoolBeforePointwise, TheReportCountsTheConvAndTheMacsSaved) {
  auto model = compile(load_model(kModels + "densenet_transition.json"));
  Session s(model);
  s.run();
  const nlohmann::json by_pass = profile_report(s, 0)["passes"]["by_pass"];
  const auto pass = std::find_if(by_pass.begin(), by_pass.end(),
                                 [](const nlohmann::json& p) { return p["pass"] == "pool_before_pointwise"; });
  ASSERT_NE(pass, by_pass.end());
  EXPECT_EQ((*pass)["counts"], nlohmann::json::array({{{"action", "swapped"}, {"op_type", "Conv"}, {"nodes", 1}}}));
  EXPECT_EQ((*pass)["change"]["macs"], -int64_t{256} * 128 * (56 * 56 - 28 * 28));
  EXPECT_EQ(model->total_cost().macs, int64_t{256} * 128 * 28 * 28);
}

}  // namespace
}  // namespace minfer
