// The thread_splits pass: a 1x1 Conv whose output only a depthwise Conv reads gets
// split_output_channels (its kernel then gives each thread output channels on planes of
// at most 28x28, the planes the depthwise layer's thread reads next); nothing else does.
// The values stay the ones of one thread, bit for bit.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "tests/op_test_util.h"

namespace minfer {
namespace {

Tensor weights(Shape shape, uint32_t seed) {
  return Tensor(shape, test::random_values(num_elements(shape), seed));
}

// x [1, 8, h, h] -> expand (1x1, 8 -> 48) -> Relu -> reader -> y; the reader is a
// depthwise 3x3 (group 48), or a regular 3x3 when `depthwise` is false.
Graph expand_then(int64_t h, bool depthwise) {
  Graph g;
  g.source = "<thread_splits>";
  g.inputs.push_back({"x", {1, 8, h, h}});
  g.initializers["we"] = weights({48, 8, 1, 1}, 1);
  g.initializers["wr"] = weights({48, depthwise ? 1 : 48, 3, 3}, 2);
  g.nodes.push_back({"expand", "Conv", {"x", "we"}, {"e"}, {}});
  g.nodes.push_back({"relu", "Relu", {"e"}, {"r"}, {}});
  Node reader{"reader", "Conv", {"r", "wr"}, {"y"}, {}};
  reader.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  if (depthwise) reader.attrs.set("group", int64_t{48});
  g.nodes.push_back(reader);
  g.outputs = {"y"};
  return g;
}

const PassLog& thread_splits_log(const CompiledModel& m) {
  for (const PassLog& log : m.pass_logs())
    if (log.pass == "thread_splits") return log;
  throw std::runtime_error("no thread_splits pass");
}

std::vector<float> run(const std::shared_ptr<const CompiledModel>& model, int64_t h) {
  Session s(model);
  s.set_input("x", test::random_values(8 * h * h, 3));
  s.run();
  auto out = s.output("y");
  return {out.begin(), out.end()};
}

CompileOptions threads(int n) {
  CompileOptions o;
  o.num_threads = n;
  return o;
}

TEST(ThreadSplits, ExpansionReadByADepthwiseConvSplitsItsOutputChannels) {
  const auto two = compile(expand_then(14, true), threads(2));
  const PassLog& log = thread_splits_log(*two);
  ASSERT_EQ(log.actions.size(), 1u);
  EXPECT_EQ(log.actions[0].action, "split");
  EXPECT_EQ(log.actions[0].nodes, (std::vector<std::string>{"expand+relu", "reader"}));
  EXPECT_EQ(log.actions[0].before.flops, log.actions[0].after.flops);
  // The direct pointwise kernel (the SIMD targets') splits channels on a 14x14 plane.
  const nlohmann::json& d = two->steps().front().facts().details;
  if (active_isa() != Isa::kScalar) {
    EXPECT_EQ(d.value("kernel", ""), "pointwise_direct");
    EXPECT_EQ(d.value("thread_split", ""), "output channels");
  }
  EXPECT_EQ(run(two, 14), run(compile(expand_then(14, true), threads(1)), 14));
  // On a 56x56 plane it keeps the split by pixels.
  const auto wide = compile(expand_then(56, true), threads(2));
  EXPECT_EQ(thread_splits_log(*wide).actions.size(), 1u);
  EXPECT_FALSE(wide->steps().front().facts().details.contains("thread_split"));
}

TEST(ThreadSplits, OnlyA1x1ConvWhoseOnlyReaderIsADepthwiseConv) {
  EXPECT_TRUE(thread_splits_log(*compile(expand_then(14, false), threads(2))).actions.empty());
  Graph read_twice = expand_then(14, true);
  read_twice.outputs.push_back("r");
  EXPECT_TRUE(thread_splits_log(*compile(read_twice, threads(2))).actions.empty());
  Graph regular = expand_then(14, true);  // a 3x3 producer
  regular.initializers["we"] = weights({48, 8, 3, 3}, 4);
  regular.nodes[0].attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  EXPECT_TRUE(thread_splits_log(*compile(regular, threads(2))).actions.empty());
}

}  // namespace
}  // namespace minfer
