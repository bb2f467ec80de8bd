// The blocked_layout pass: consecutive convolutions that run faster in NCHWc keep their
// tensors in it, with Reorder steps where a region starts (a residual that is NCHW) and
// ends (a reader that is not in the region, never a graph output); the outputs are those
// of the graph compiled without the pass, and its changes add up to the model's cost.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "engine/engine.h"
#include "ops/blocked_layout.h"
#include "ops/kernels/blocked_conv.h"
#include "profiler/isa.h"
#include "tests/op_test_util.h"

namespace minfer {
namespace {

Tensor tensor(Shape shape, uint32_t seed) {
  return {shape, test::random_values(num_elements(shape), seed)};
}

Node conv(const std::string& name, std::vector<std::string> inputs, const std::string& out, int64_t k) {
  Node n{name, "Conv", std::move(inputs), {out}, {}};
  n.attrs.set("pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
  return n;
}

// x -> Conv 3x3 + Relu -> a; Conv 3x3 (a) + x -> Relu -> b (a residual block); b -> Conv
// 3x3 -> d; d -> GlobalAveragePool -> y; b -> Relu -> z (a reader outside the region);
// outputs y, z and, with `a_out`, a.
Graph block_graph(bool a_out) {
  Graph g;
  g.source = "<blocked_layout>";
  g.inputs.push_back({"x", {2, 32, 9, 11}});
  g.initializers["w1"] = tensor({32, 32, 3, 3}, 1);
  g.initializers["b1"] = tensor({32}, 2);
  g.initializers["w2"] = tensor({32, 32, 3, 3}, 3);
  g.initializers["w3"] = tensor({64, 32, 3, 3}, 4);
  g.initializers["b3"] = tensor({64}, 5);
  g.nodes.push_back(conv("conv1", {"x", "w1", "b1"}, "a0", 3));
  g.nodes.push_back({"relu1", "Relu", {"a0"}, {"a"}, {}});
  g.nodes.push_back(conv("conv2", {"a", "w2"}, "c", 3));
  g.nodes.push_back({"add", "Add", {"c", "x"}, {"s"}, {}});
  g.nodes.push_back({"relu2", "Relu", {"s"}, {"b"}, {}});
  g.nodes.push_back(conv("down", {"b", "w3", "b3"}, "d", 3));
  g.nodes.push_back({"pool", "GlobalAveragePool", {"d"}, {"y"}, {}});
  g.nodes.push_back({"relu3", "Relu", {"b"}, {"z"}, {}});
  g.outputs = {"y", "z"};
  if (a_out) g.outputs.push_back("a");
  return g;
}

std::vector<float> run(const std::shared_ptr<const CompiledModel>& model, const std::string& output) {
  Session s(model);
  s.set_input("x", test::random_values(2 * 32 * 9 * 11, 7));
  s.run();
  auto out = s.output(output);
  return {out.begin(), out.end()};
}

std::vector<std::string> step_types(const CompiledModel& model) {
  std::vector<std::string> types;
  for (const Step& s : model.steps()) types.push_back(s.op_type);
  return types;
}

// The largest difference between y of `blocked` and of g compiled with `plain` options
// (no blocked layout; no fusions where the test asks), on the same x.
double error_against(const std::shared_ptr<const CompiledModel>& blocked, const Graph& g, const CompileOptions& plain,
                     const std::vector<float>& x) {
  Session a(blocked), b(compile(g, plain));
  a.set_input("x", x);
  b.set_input("x", x);
  a.run();
  b.run();
  const auto ya = a.output("y"), yb = b.output("y");
  return test::max_rel_error({ya.begin(), ya.end()}, {yb.begin(), yb.end()});
}

std::string layouts_of(const CompiledModel& model, const std::string& step_prefix) {
  for (const Step& s : model.steps())
    if (s.name.rfind(step_prefix, 0) == 0)
      return s.facts().details.value("tensor_layouts", std::string("(not blocked)"));
  return "(no step)";
}

// x [1, channels, 9, 10] through convolutions one after the other, each {name, output
// channels, window} with its own random weights (same padding): tensors t0, t1, ..., the
// last one y.
Graph conv_chain(const std::string& source, int64_t channels,
                 const std::vector<std::tuple<std::string, int64_t, int64_t>>& layers) {
  Graph g;
  g.source = source;
  g.inputs.push_back({"x", {1, channels, 9, 10}});
  std::string in = "x";
  for (size_t i = 0; i < layers.size(); ++i) {
    const auto& [name, cout, k] = layers[i];
    const std::string w = "w" + std::to_string(i), out = i + 1 == layers.size() ? "y" : "t" + std::to_string(i);
    g.initializers[w] = tensor({cout, channels, k, k}, static_cast<uint32_t>(i + 1));
    g.nodes.push_back(conv(name, {in, w}, out, k));
    in = out;
    channels = cout;
  }
  g.outputs = {"y"};
  return g;
}

TEST(BlockedLayout, ARegionOfConvolutionsKeepsNchwcBetweenThem) {
  for (bool a_out : {false, true}) {
    SCOPED_TRACE(a_out ? "a is a graph output" : "a is internal");
    const Graph g = block_graph(a_out);
    auto blocked = compile(g);
    CompileOptions nchw;
    nchw.passes.blocked_layout = false;
    auto plain = compile(g, nchw);
    for (const std::string& out : g.outputs)
      EXPECT_LT(test::max_rel_error(run(blocked, out), run(plain, out)), 1e-5) << out;
    const PassLog& log = blocked->pass_logs().back();
    ASSERT_EQ(log.pass, "blocked_layout");
    for (int64_t Cost::*field : {&Cost::macs, &Cost::flops, &Cost::params, &Cost::bytes_read, &Cost::bytes_written}) {
      int64_t sum = 0;
      for (const PassLog& p : blocked->pass_logs())
        for (const PassAction& a : p.actions) sum += a.after.*field - a.before.*field;
      EXPECT_EQ(sum, blocked->total_cost().*field - blocked->cost_before_passes().*field);
    }
    const kernels::BlockedConvKernel* k = kernels::blocked_conv_kernel(active_isa());
    if (!k) {  // the scalar target: nothing changes
      EXPECT_TRUE(log.actions.empty());
      EXPECT_EQ(step_types(*blocked), step_types(*plain));
      continue;
    }
    const std::string c = "NCHW" + std::to_string(k->lanes) + "c";
    // x is the residual of conv2's NCHWc output: one Reorder, which conv1 reads too; a,
    // when a graph output, stays NCHW (conv2 then reads it so); b goes back to NCHW for
    // relu3 alone; d stays NCHWc, which the pool reads.
    const std::vector<std::string> expected = {"Reorder",           "Conv",    "Conv", "Conv",
                                               "GlobalAveragePool", "Reorder", "Relu"};
    EXPECT_EQ(step_types(*blocked), expected);
    EXPECT_EQ(layouts_of(*blocked, "conv1"), c + " -> " + (a_out ? "NCHW" : c));
    EXPECT_EQ(layouts_of(*blocked, "conv2"), (a_out ? "NCHW" : c) + " -> " + c);
    EXPECT_EQ(layouts_of(*blocked, "down"), c + " -> " + c);
    const Step& first = blocked->steps().front();
    EXPECT_EQ(first.cost.macs, 0);
    EXPECT_EQ(first.cost.bytes_read, 2 * 32 * 9 * 11 * 4);
    EXPECT_EQ(first.cost.bytes_written, 2 * 32 * 9 * 11 * 4);
    EXPECT_EQ(blocked->values()[static_cast<size_t>(blocked->value_index("b"))].type.shape, (Shape{2, 32, 9, 11}));
  }
}

// A Concat of two NCHWc outputs and a max pool after it stay in the region: x -> Conv
// 3x3 -> a, x -> Conv 3x3 -> b, Concat(a, b) -> m, MaxPool 3x3 / 2 -> p, Conv 3x3 -> y.
TEST(BlockedLayout, ConcatsAndMaxPoolsOfNchwcTensorsJoinTheRegion) {
  Graph g;
  g.source = "<concat_pool>";
  g.inputs.push_back({"x", {1, 32, 12, 13}});
  g.initializers["wa"] = tensor({32, 32, 3, 3}, 1);
  g.initializers["wb"] = tensor({16, 32, 3, 3}, 2);
  g.initializers["wy"] = tensor({32, 48, 3, 3}, 3);
  g.nodes.push_back(conv("conv_a", {"x", "wa"}, "a", 3));
  g.nodes.push_back(conv("conv_b", {"x", "wb"}, "b", 3));
  Node concat{"concat", "Concat", {"a", "b"}, {"m"}, {}};
  concat.attrs.set("axis", int64_t{1});
  g.nodes.push_back(concat);
  Node pool{"pool", "MaxPool", {"m"}, {"p"}, {}};
  pool.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  pool.attrs.set("strides", std::vector<int64_t>{2, 2});
  pool.attrs.set("ceil_mode", int64_t{1});
  g.nodes.push_back(pool);
  g.nodes.push_back(conv("conv_y", {"p", "wy"}, "y", 3));
  g.outputs = {"y"};
  auto blocked = compile(g);
  CompileOptions nchw;
  nchw.passes.blocked_layout = false;
  EXPECT_LT(error_against(blocked, g, nchw, test::random_values(32 * 12 * 13, 9)), 1e-5);
  const int64_t c = blocked_lanes(active_isa());
  // 16 channels of conv_b are a whole block on both SIMD targets.
  EXPECT_EQ(step_types(*blocked), (std::vector<std::string>{"Conv", "Conv", "Concat", "MaxPool", "Conv"}));
  for (const Node& n : blocked->graph().nodes) {
    SCOPED_TRACE(n.name);
    const int64_t in = n.attrs.get_int("blocked_input", 0), out = n.attrs.get_int("blocked_output", 0);
    EXPECT_EQ(in, n.name.rfind("conv_", 0) == 0 && n.name != "conv_y" ? 0 : c);
    EXPECT_EQ(out, n.name == "conv_y" ? 0 : c);
  }
}

// An average pool whose zero Pad fuse_pads merged into it (Inception V3's branch pools)
// joins the region too: x -> Conv 3x3 -> a, Pad 1 -> AveragePool 3x3 -> p, Conv 3x3 -> y.
TEST(BlockedLayout, AnAveragePoolAfterAPadJoinsTheRegion) {
  Graph g;
  g.source = "<pad_average_pool>";
  g.inputs.push_back({"x", {1, 32, 12, 13}});
  g.initializers["wa"] = tensor({32, 32, 3, 3}, 1);
  g.initializers["wy"] = tensor({32, 32, 3, 3}, 3);
  g.initializers["pads"] = Tensor(Shape{8}, std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1});
  g.nodes.push_back(conv("conv_a", {"x", "wa"}, "a", 3));
  g.nodes.push_back({"pad", "Pad", {"a", "pads"}, {"ap"}, {}});
  Node pool{"pool", "AveragePool", {"ap"}, {"p"}, {}};
  pool.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  g.nodes.push_back(pool);
  g.nodes.push_back(conv("conv_y", {"p", "wy"}, "y", 3));
  g.outputs = {"y"};
  auto blocked = compile(g);
  CompileOptions plain;
  plain.passes.blocked_layout = false;
  plain.passes.fuse = false;
  EXPECT_LT(error_against(blocked, g, plain, test::random_values(32 * 12 * 13, 9)), 1e-5);
  const int64_t c = blocked_lanes(active_isa());
  EXPECT_EQ(step_types(*blocked), (std::vector<std::string>{"Conv", "AveragePool", "Conv"}));
  for (const Node& n : blocked->graph().nodes) {
    SCOPED_TRACE(n.name);
    EXPECT_EQ(n.attrs.get_int("blocked_input", 0), n.name == "conv_a" ? 0 : c);
    EXPECT_EQ(n.attrs.get_int("blocked_output", 0), n.name == "conv_y" ? 0 : c);
  }
}

// A squeeze-and-excitation gate fused into the 1x1 Conv after it (fuse_channel_scale) keeps
// that Conv in the region where its shape prefers NCHWc (AVX-512, 128 input channels): the
// blocked kernel folds each image's gate into a copy of its packed weights. x -> Conv 3x3
// -> a; GlobalAveragePool -> Conv 1x1 + Relu -> Conv 1x1 + Sigmoid -> gate; a * gate ->
// Conv 1x1 -> c; Conv 3x3 -> y.
TEST(BlockedLayout, AGatedPointwiseConvStaysInTheRegion) {
  // 7x9: an image's input (8064 floats) is smaller than the packed weights (16384), which
  // the kernel then keeps, scaling a copy of the input; 12x14 (21504): it scales the weights.
  for (const auto& [h, w, mode] : {std::tuple<int64_t, int64_t, const char*>{7, 9, "on a copy of the input"},
                                   {12, 14, "folded into the weights per image"}}) {
    SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w));
    Graph g;
    g.source = "<gated_pointwise>";
    g.inputs.push_back({"x", {2, 128, h, w}});
    // Weights of about 1 / sqrt(fan-in), so that every layer's outputs stay near 1.
    const auto scaled = [](Shape shape, uint32_t seed, float range) {
      return Tensor(shape, test::random_values(num_elements(shape), seed, -range, range));
    };
    g.initializers["wa"] = scaled({128, 128, 3, 3}, 1, 0.05f);
    g.initializers["w1"] = scaled({32, 128, 1, 1}, 2, 0.15f);
    g.initializers["w2"] = scaled({128, 32, 1, 1}, 3, 0.3f);
    g.initializers["wc"] = scaled({128, 128, 1, 1}, 4, 0.15f);
    g.initializers["bc"] = scaled({128}, 5, 0.1f);
    g.initializers["wy"] = scaled({32, 128, 3, 3}, 6, 0.05f);
    g.nodes.push_back(conv("conv_a", {"x", "wa"}, "a", 3));
    g.nodes.push_back({"pool", "GlobalAveragePool", {"a"}, {"m"}, {}});
    g.nodes.push_back(conv("fc1", {"m", "w1"}, "f1", 1));
    g.nodes.push_back({"relu", "Relu", {"f1"}, {"r"}, {}});
    g.nodes.push_back(conv("fc2", {"r", "w2"}, "f2", 1));
    g.nodes.push_back({"sigmoid", "Sigmoid", {"f2"}, {"gate"}, {}});
    g.nodes.push_back({"mul", "Mul", {"a", "gate"}, {"s"}, {}});
    g.nodes.push_back(conv("conv_c", {"s", "wc", "bc"}, "c", 1));
    g.nodes.push_back(conv("conv_y", {"c", "wy"}, "y", 3));
    g.outputs = {"y"};
    auto blocked = compile(g);
    CompileOptions plain;
    plain.passes.blocked_layout = false;
    plain.passes.fuse = false;
    EXPECT_LT(error_against(blocked, g, plain, test::random_values(2 * 128 * h * w, 9)), 1e-5);
    const bool nchwc = active_isa() == Isa::kAvx512;  // 1x1 layers of 128 channels prefer it there
    bool found = false;
    for (const Step& step : blocked->steps()) {
      if (step.name.find("conv_c") == std::string::npos) continue;
      found = true;
      const nlohmann::json& d = step.facts().details;
      EXPECT_TRUE(d.contains("fused_input_scale"));
      if (nchwc) {
        EXPECT_EQ(d["kernel"], "blocked_direct");
        EXPECT_EQ(d["fused_input_scale"], mode);
      }
    }
    EXPECT_TRUE(found);
    // The pool reads NCHWc too: no Reorder.
    const std::vector<std::string> types = step_types(*blocked);
    EXPECT_EQ(std::count(types.begin(), types.end(), "Reorder"), 0);
  }
}

// The graph compiled with and without the pass gives the same outputs (within the
// kernels' rounding); returns the compiled one.
std::shared_ptr<const CompiledModel> compile_checked(const Graph& g, const Shape& x_shape) {
  auto blocked = compile(g);
  CompileOptions nchw;
  nchw.passes.blocked_layout = false;
  Session a(blocked), b(compile(g, nchw));
  const std::vector<float> x = test::random_values(num_elements(x_shape), 9);
  a.set_input("x", x);
  b.set_input("x", x);
  a.run();
  b.run();
  for (const std::string& out : g.outputs) {
    const auto ya = a.output(out), yb = b.output(out);
    EXPECT_LT(test::max_rel_error({ya.begin(), ya.end()}, {yb.begin(), yb.end()}), 1e-5) << out;
  }
  return blocked;
}

// Depthwise convolutions read and write NCHWc too (the channels-in-lanes kernel), and one
// on a plane it would transpose anyway starts a region: x -> depthwise 3x3 / 2 -> a ->
// Conv 3x3 -> b -> depthwise 3x3 -> y, with no Reorder; y, a graph output, is NCHW.
TEST(BlockedLayout, DepthwiseConvolutionsJoinTheRegion) {
  Graph g;
  g.source = "<depthwise>";
  g.inputs.push_back({"x", {1, 32, 15, 15}});
  g.initializers["wd1"] = tensor({32, 1, 3, 3}, 1);
  g.initializers["bd1"] = tensor({32}, 2);
  g.initializers["w"] = tensor({32, 32, 3, 3}, 3);
  g.initializers["wd2"] = tensor({32, 1, 3, 3}, 4);
  Node dw1 = conv("dw1", {"x", "wd1", "bd1"}, "a0", 3);
  dw1.attrs.set("group", int64_t{32});
  dw1.attrs.set("strides", std::vector<int64_t>{2, 2});
  g.nodes.push_back(dw1);
  g.nodes.push_back({"relu", "Relu", {"a0"}, {"a"}, {}});
  g.nodes.push_back(conv("conv", {"a", "w"}, "b", 3));
  Node dw2 = conv("dw2", {"b", "wd2"}, "y", 3);
  dw2.attrs.set("group", int64_t{32});
  g.nodes.push_back(dw2);
  g.outputs = {"y"};
  auto blocked = compile_checked(g, {1, 32, 15, 15});
  EXPECT_EQ(step_types(*blocked), (std::vector<std::string>{"Conv", "Conv", "Conv"}));
  const int64_t lanes = blocked_lanes(active_isa());
  if (!lanes) {  // the scalar target: nothing changes
    EXPECT_TRUE(blocked->pass_logs().back().actions.empty());
    return;
  }
  const std::string c = layout_name(lanes);
  EXPECT_EQ(layouts_of(*blocked, "dw1"), "NCHW -> " + c);
  EXPECT_EQ(layouts_of(*blocked, "conv"), c + " -> " + c);
  EXPECT_EQ(layouts_of(*blocked, "dw2"), c + " -> NCHW");
  for (const Step& s : blocked->steps()) {
    if (s.name.rfind("dw", 0) != 0) continue;
    EXPECT_NE(s.facts().details.value("variant", std::string()).find("_lanes_"), std::string::npos) << s.name;
  }
}

// A max pool (an op whose inputs and output share one layout) whose output no NCHWc op
// reads writes NCHW, so it reads NCHW too, from a Reorder of the region's tensor: x ->
// Conv 3x3 -> a -> Conv 3x3 -> y1; a -> MaxPool -> Relu -> y2.
TEST(BlockedLayout, AMaxPoolOutsideTheRegionReadsNchw) {
  Graph g;
  g.source = "<pool_outside>";
  g.inputs.push_back({"x", {1, 32, 10, 10}});
  g.initializers["w1"] = tensor({32, 32, 3, 3}, 1);
  g.initializers["w2"] = tensor({32, 32, 3, 3}, 2);
  g.nodes.push_back(conv("conv1", {"x", "w1"}, "a", 3));
  g.nodes.push_back(conv("conv2", {"a", "w2"}, "y1", 3));
  Node pool{"pool", "MaxPool", {"a"}, {"p"}, {}};
  pool.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.attrs.set("strides", std::vector<int64_t>{2, 2});
  g.nodes.push_back(pool);
  g.nodes.push_back({"relu", "Relu", {"p"}, {"y2"}, {}});
  g.outputs = {"y1", "y2"};
  auto blocked = compile_checked(g, {1, 32, 10, 10});
  if (!blocked_lanes(active_isa())) {
    EXPECT_EQ(step_types(*blocked), (std::vector<std::string>{"Conv", "Conv", "MaxPool", "Relu"}));
    return;
  }
  EXPECT_EQ(step_types(*blocked), (std::vector<std::string>{"Conv", "Conv", "Reorder", "MaxPool", "Relu"}));
  for (const Node& n : blocked->graph().nodes)
    if (n.name == "pool") {
      EXPECT_EQ(n.attrs.get_int("blocked_input", 0), 0);
      EXPECT_EQ(n.attrs.get_int("blocked_output", 0), 0);
    }
}

// 1-D convolutions ([N, C, L], which the blocked kernel runs as one-row images) have no
// NCHWc form in the graph: a chain of them compiles and stays NCHW.
TEST(BlockedLayout, OneDimensionalConvolutionsStayNchw) {
  Graph g;
  g.source = "<conv1d>";
  g.inputs.push_back({"x", {1, 32, 20}});
  g.initializers["w"] = tensor({32, 32, 3}, 1);
  Node a{"conv_a", "Conv", {"x", "w"}, {"a"}, {}};
  a.attrs.set("pads", std::vector<int64_t>{1, 1});
  Node b = a;
  b.name = "conv_b";
  b.inputs[0] = "a";
  b.outputs[0] = "y";
  g.nodes = {a, b};
  g.outputs = {"y"};
  auto model = compile(g);
  EXPECT_TRUE(model->pass_logs().back().actions.empty());
  EXPECT_EQ(step_types(*model), (std::vector<std::string>{"Conv", "Conv"}));
}

// 1x1 layers of 128 input channels or more join a region on both blocked targets (the
// blocked kernel in NCHWc ran them at 0.86-1.05x the NCHW kernels' time on AVX2 too), of
// 64 or more on AVX-512 only; fewer stay NCHW: x -> Conv 3x3 (32 -> 128), 1x1 128 ->
// 128, 1x1 128 -> 80, 1x1 80 -> 16, 1x1 16 -> 48 -> y.
TEST(BlockedLayout, PointwiseLayersOfManyInputChannelsJoinTheRegion) {
  const Graph g = conv_chain("<pointwise region>", 32,
                             {{"conv", 128, 3}, {"pw1", 128, 1}, {"pw2", 80, 1}, {"pw3", 16, 1}, {"pw4", 48, 1}});
  auto model = compile(g);
  CompileOptions nchw;
  nchw.passes.blocked_layout = false;
  const std::vector<float> x = test::random_values(32 * 9 * 10, 6);
  EXPECT_LT(error_against(model, g, nchw, x), 1e-5);
  const kernels::BlockedConvKernel* k = kernels::blocked_conv_kernel(active_isa());
  if (!k) {
    EXPECT_TRUE(model->pass_logs().back().actions.empty());
    return;
  }
  const std::string c = "NCHW" + std::to_string(k->lanes) + "c";
  const bool avx512 = active_isa() == Isa::kAvx512;
  EXPECT_EQ(layouts_of(*model, "conv"), "NCHW -> " + c);
  EXPECT_EQ(layouts_of(*model, "pw1"), c + " -> " + c);
  EXPECT_EQ(layouts_of(*model, "pw2"), c + (avx512 ? " -> " + c : " -> NCHW"));
  EXPECT_EQ(layouts_of(*model, "pw3"), avx512 ? c + " -> NCHW" : "(not blocked)");
  EXPECT_EQ(layouts_of(*model, "pw4"), "(not blocked)");
  EXPECT_EQ(step_types(*model), (std::vector<std::string>{"Conv", "Conv", "Conv", "Conv", "Conv"}));
}

// A pointwise layer that widens an NCHW input into a region starts it, as ResNet-50's
// first downsampling shortcut does (64 -> 256 channels at 56x56): reordering its input
// moves fewer bytes than a Reorder of its output, which the region's next layers read.
// x -> Conv 3x3 -> a -> Conv 1x1 (widens) -> c; x -> Conv 1x1 (widens) + c -> s;
// s -> Conv 1x1 -> y.
TEST(BlockedLayout, AWideningPointwiseLayerStartsARegion) {
  Graph g;
  g.source = "<widening shortcut>";
  g.inputs.push_back({"x", {1, 128, 9, 10}});
  // Weights of variance 1 / fan-in, so that every layer's outputs stay near the inputs'
  // magnitude and the two graphs' rounding stays near float's epsilon.
  const auto weights = [](Shape shape, uint32_t seed) {
    Tensor w = tensor(shape, seed);
    const float scale = std::sqrt(3.0f / static_cast<float>(shape[1] * shape[2] * shape[3]));
    for (float& v : w.mutable_values<float>()) v *= scale;
    return w;
  };
  g.initializers["w1"] = weights({128, 128, 3, 3}, 1);
  g.initializers["w2"] = weights({256, 128, 1, 1}, 2);
  g.initializers["w3"] = weights({256, 128, 1, 1}, 3);
  g.initializers["w4"] = weights({128, 256, 1, 1}, 4);
  g.nodes.push_back(conv("conv", {"x", "w1"}, "a", 3));
  g.nodes.push_back(conv("widen", {"a", "w2"}, "c", 1));
  g.nodes.push_back(conv("shortcut", {"x", "w3"}, "d", 1));
  g.nodes.push_back({"add", "Add", {"d", "c"}, {"s"}, {}});
  g.nodes.push_back(conv("narrow", {"s", "w4"}, "y", 1));
  g.outputs = {"y"};
  auto model = compile(g);
  CompileOptions nchw;
  nchw.passes.blocked_layout = false;
  EXPECT_LT(error_against(model, g, nchw, test::random_values(128 * 9 * 10, 6)), 1e-5);
  const kernels::BlockedConvKernel* k = kernels::blocked_conv_kernel(active_isa());
  if (!k) {
    EXPECT_TRUE(model->pass_logs().back().actions.empty());
    return;
  }
  const std::string c = "NCHW" + std::to_string(k->lanes) + "c";
  EXPECT_EQ(layouts_of(*model, "conv"), "NCHW -> " + c);
  EXPECT_EQ(layouts_of(*model, "widen"), c + " -> " + c);
  EXPECT_EQ(layouts_of(*model, "shortcut"), "NCHW -> " + c);
  EXPECT_EQ(layouts_of(*model, "narrow"), c + " -> NCHW");
  EXPECT_EQ(step_types(*model), (std::vector<std::string>{"Conv", "Conv", "Conv", "Conv"}));
}

// A 1x1 layer that expands a plane of 28x28 or more (twice its inputs or more) starts a
// region however few its inputs (16 -> 64), reading its NCHW input in place: no Reorder
// before it, none between it and the stride-2 depthwise layer after it (a MobileNet's
// expansion). On a 27x27 plane it stays in NCHW.
// x [1, 16, side, side] -> Conv 1x1 (16 -> 64) -> t -> depthwise 3x3 s2 -> y.
TEST(BlockedLayout, AWideningPointwiseLayerOnALargePlaneStartsARegion) {
  for (int64_t side : {28, 27}) {
    SCOPED_TRACE(testing::Message() << side << "x" << side);
    Graph g;
    g.source = "<expansion>";
    g.inputs.push_back({"x", {1, 16, side, side}});
    g.initializers["w1"] = tensor({64, 16, 1, 1}, 1);
    g.initializers["w2"] = tensor({64, 1, 3, 3}, 2);
    g.nodes.push_back(conv("expand", {"x", "w1"}, "t", 1));
    Node dw = conv("dw", {"t", "w2"}, "y", 3);
    dw.attrs.set("group", int64_t{64});
    dw.attrs.set("strides", std::vector<int64_t>{2, 2});
    g.nodes.push_back(dw);
    g.outputs = {"y"};
    auto model = compile(g);
    CompileOptions nchw;
    nchw.passes.blocked_layout = false;
    EXPECT_LT(error_against(model, g, nchw, test::random_values(16 * side * side, 3)), 1e-5);
    const std::vector<std::string> steps = step_types(*model);
    EXPECT_EQ(std::count(steps.begin(), steps.end(), "Reorder"), 0);
    const kernels::BlockedConvKernel* k = kernels::blocked_conv_kernel(active_isa());
    if (!k || side < 28) {
      EXPECT_EQ(layouts_of(*model, "expand"), "(not blocked)");
      continue;
    }
    const std::string c = "NCHW" + std::to_string(k->lanes) + "c";
    EXPECT_EQ(layouts_of(*model, "expand"), "NCHW -> " + c);
    EXPECT_EQ(layouts_of(*model, "dw").rfind(c + " -> ", 0), 0u) << layouts_of(*model, "dw");
  }
}

// A 1x1 layer of 32 input channels (no faster in NCHWc by itself) joins a region whose
// NCHWc tensor only such readers read, as RegNetX's first stage does on AVX-512, and
// stays out of it where another reader reads that tensor in NCHW (then so does the
// region's first layer: a Reorder would cost more than it saves).
// x -> Conv 3x3 (64 -> 32) -> t0 -> Conv 1x1 -> t1 -> Conv 1x1 (32 -> 64) -> y; with
// `nchw_reader`, t0 -> Relu -> z too.
TEST(BlockedLayout, AFewChannelPointwiseLayerJoinsARegionItIsTheOnlyReaderOf) {
  for (bool nchw_reader : {false, true}) {
    SCOPED_TRACE(nchw_reader ? "t0 has an NCHW reader" : "t0 has only pointwise readers");
    Graph g = conv_chain("<few-channel pointwise>", 64, {{"conv", 32, 3}, {"pw", 32, 1}, {"widen", 64, 1}});
    if (nchw_reader) {
      g.nodes.push_back({"relu", "Relu", {"t0"}, {"z"}, {}});
      g.outputs.push_back("z");
    }
    auto model = compile(g);
    CompileOptions nchw;
    nchw.passes.blocked_layout = false;
    EXPECT_LT(error_against(model, g, nchw, test::random_values(64 * 9 * 10, 4)), 1e-5);
    const std::vector<std::string> steps = step_types(*model);
    EXPECT_EQ(std::count(steps.begin(), steps.end(), "Reorder"), 0);
    if (active_isa() != Isa::kAvx512 || nchw_reader) {  // AVX2's 1x1 layers need 128 channels
      EXPECT_EQ(layouts_of(*model, "pw"), "(not blocked)");
      continue;
    }
    EXPECT_EQ(layouts_of(*model, "conv"), "NCHW -> NCHW16c");
    EXPECT_EQ(layouts_of(*model, "pw"), "NCHW16c -> NCHW16c");
    EXPECT_EQ(layouts_of(*model, "widen"), "NCHW16c -> NCHW");
  }
}

// Off, or on a graph with no convolution that prefers NCHWc, the pass changes nothing.
TEST(BlockedLayout, OnlyConvolutionsThatPreferItChange) {
  Graph g;
  g.source = "<pointwise>";
  g.inputs.push_back({"x", {1, 32, 8, 8}});
  g.initializers["w"] = tensor({32, 32, 1, 1}, 1);
  g.nodes.push_back(conv("pw1", {"x", "w"}, "a", 1));
  g.nodes.push_back(conv("pw2", {"a", "w"}, "y", 1));
  g.outputs = {"y"};
  auto model = compile(g);
  EXPECT_TRUE(model->pass_logs().back().actions.empty());
  EXPECT_EQ(step_types(*model), (std::vector<std::string>{"Conv", "Conv"}));
}

}  // namespace
}  // namespace minfer
