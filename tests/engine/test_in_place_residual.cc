// A Conv whose kernel sums a fused residual where it stores each output element (the
// direct pointwise and the blocked kernel) writes its output over the residual's buffer
// when nothing reads the residual later, and computes what the unfused graph does; a
// residual that is also the Conv's input, or that a later op reads, keeps a buffer of
// its own.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/engine.h"
#include "profiler/isa.h"
#include "tests/op_test_util.h"

namespace minfer {
namespace {

Tensor tensor(Shape shape, uint32_t seed) {
  return {shape, test::random_values(num_elements(shape), seed)};
}

// x -> Relu -> r; r -> Conv 1x1 + Relu -> a; a -> Conv k x k -> c; Add(c, residual) -> s;
// Relu -> y. The residual is r, or a (the second Conv's own input). With `later`, the
// output also includes Mul(r, r), so r outlives the Add.
Graph residual_graph(int64_t k, bool residual_is_input, bool later) {
  Graph g;
  g.source = "<in_place_residual>";
  g.inputs.push_back({"x", {1, 16, 16, 16}});  // 256 pixels: the direct pointwise kernel's
  g.initializers["wa"] = tensor({16, 16, 1, 1}, 1);
  g.initializers["ba"] = tensor({16}, 2);
  g.initializers["wc"] = tensor({16, 16, k, k}, 3);
  g.initializers["bc"] = tensor({16}, 4);
  g.nodes.push_back({"relu_x", "Relu", {"x"}, {"r"}, {}});
  g.nodes.push_back({"conv_a", "Conv", {"r", "wa", "ba"}, {"a0"}, {}});
  g.nodes.push_back({"relu_a", "Relu", {"a0"}, {"a"}, {}});
  Node conv_c{"conv_c", "Conv", {"a", "wc", "bc"}, {"c"}, {}};
  conv_c.attrs.set("pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
  g.nodes.push_back(conv_c);
  g.nodes.push_back({"add", "Add", {"c", residual_is_input ? "a" : "r"}, {"s"}, {}});
  g.nodes.push_back({"relu_s", "Relu", {"s"}, {"y"}, {}});
  g.outputs = {"y"};
  if (later) {
    g.nodes.push_back({"square", "Mul", {"r", "r"}, {"q"}, {}});
    g.outputs.push_back("q");
  }
  return g;
}

std::vector<float> run(const std::shared_ptr<const CompiledModel>& model, const std::string& output) {
  Session s(model);
  s.set_input("x", test::random_values(16 * 16 * 16, 7));
  s.run();
  auto out = s.output(output);
  return {out.begin(), out.end()};
}

// The buffer holding tensor `name`.
const BufferSpan& buffer_of(const CompiledModel& model, const std::string& name) {
  for (const BufferSpan& b : model.buffers())
    if (std::find(b.tensors.begin(), b.tensors.end(), name) != b.tensors.end()) return b;
  ADD_FAILURE() << name << " has no buffer";
  return model.buffers().front();
}

const Step& step_named_like(const CompiledModel& model, const std::string& prefix) {
  for (const Step& s : model.steps())
    if (s.name.rfind(prefix, 0) == 0) return s;
  ADD_FAILURE() << "no step " << prefix;
  return model.steps().front();
}

TEST(InPlaceResidual, TheSumTakesTheDeadResidualsBuffer) {
  for (int64_t k : {1, 3})
    for (bool residual_is_input : {false, true})
      for (bool later : {false, true}) {
        SCOPED_TRACE(testing::Message() << k << "x" << k << ", residual is the input " << residual_is_input
                                        << ", read later " << later);
        const Graph g = residual_graph(k, residual_is_input, later);
        auto fused = compile(g);
        CompileOptions unfused_options;
        unfused_options.passes.fuse = false;
        auto unfused = compile(g, unfused_options);
        const Step& conv = step_named_like(*fused, "conv_c+add");
        ASSERT_TRUE(conv.facts().details.contains("fused_residual"));
        // Only the direct pointwise and the blocked kernel say they may (not on the scalar
        // target: the GEMM).
        const bool kernel_may = conv.facts().inplace_input == 3;
        const std::string& kernel = conv.facts().kernel;
        EXPECT_EQ(kernel_may, kernel == "pointwise_direct" || kernel.starts_with("blocked_")) << kernel;
        EXPECT_TRUE(kernel_may || active_isa() == Isa::kScalar) << kernel;
        const std::string residual = residual_is_input ? "a" : "r";
        const bool shared = buffer_of(*fused, "y").name == buffer_of(*fused, residual).name;
        EXPECT_EQ(shared, kernel_may && !residual_is_input && !later);
        // The same sums in the same order as the unfused Conv, Add and Relu: the same bits.
        EXPECT_EQ(run(fused, "y"), run(unfused, "y"));
        if (later) {
          EXPECT_EQ(run(fused, "q"), run(unfused, "q"));
        }
      }
}

}  // namespace
}  // namespace minfer
