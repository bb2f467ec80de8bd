// Empty tensors: a node whose outputs are all empty computes nothing and its outputs
// become empty constants, which a Concat leaves out (PyTorch exports x.roll(1, d) on an
// axis of size 1 as the Concat of a whole slice and an empty one); a kernel that would
// read one is refused, naming the node.
#include <gtest/gtest.h>

#include "bench/cli_common.h"
#include "engine/engine.h"

namespace minfer::test {
namespace {

// x [2, 3] -> e = x[:, 0:0] -> y = Concat(x, e), z = Concat(Relu(e), x), both along axis 1.
Graph empty_slices() {
  Graph g;
  g.source = "<test>";
  g.inputs.push_back({"x", {2, 3}});
  g.initializers["starts"] = Tensor(Shape{1}, std::vector<int64_t>{0});
  g.initializers["ends"] = Tensor(Shape{1}, std::vector<int64_t>{0});
  g.initializers["axes"] = Tensor(Shape{1}, std::vector<int64_t>{1});
  Attributes axis;
  axis.set("axis", int64_t{1});
  g.nodes.push_back({"slice", "Slice", {"x", "starts", "ends", "axes"}, {"e"}, {}});
  g.nodes.push_back({"join", "Concat", {"x", "e"}, {"y"}, axis});
  g.nodes.push_back({"relu", "Relu", {"e"}, {"r"}, {}});
  g.nodes.push_back({"join_after", "Concat", {"r", "x"}, {"z"}, axis});
  g.outputs = {"y", "z"};
  return g;
}

TEST(EmptyTensors, ConcatLeavesThemOut) {
  const auto model = compile(empty_slices());
  ASSERT_EQ(model->steps().size(), 2u);  // the two Concats; the Slice and the Relu compute nothing
  Session s(model);
  cli::fill_inputs_deterministic(s);
  s.run();
  const std::span<const float> x = s.output("x");
  for (const char* out : {"y", "z"}) {
    const std::span<const float> v = s.output(out);
    ASSERT_EQ(v.size(), 6u) << out;
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(v[i], x[i]) << out << " " << i;
  }
}

TEST(EmptyTensors, AKernelThatWouldReadOneIsRefused) {
  Graph g = empty_slices();
  g.inputs.push_back({"bias", {4}});
  g.initializers["w"] = Tensor(DType::kFloat32, Shape{0, 4});
  g.nodes.push_back({"gemm", "Gemm", {"e", "w", "bias"}, {"product"}, {}});
  g.outputs.push_back("product");
  try {
    compile(std::move(g));
    ADD_FAILURE() << "compiled";
  } catch (const ModelError& e) {
    EXPECT_EQ(std::string(e.what()),
              "<test>: node 'gemm' (Gemm): input 'e' is empty (shape 2x0); empty tensors are supported only as "
              "Concat inputs");
  }
}

}  // namespace
}  // namespace minfer::test
