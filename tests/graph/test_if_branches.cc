// ONNX If: the branch its condition picks runs when the condition is known as the model
// compiles (PyTorch exports x.squeeze(dim) as an If on the dim's size being 1); one
// computed at run time is refused by name. Models built here, values by hand.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "graph/onnx_loader.h"
#include "tests/onnx_test_util.h"

namespace minfer::test {
namespace {

// The branch attribute `name` of `node`: a graph of `nodes` (op type, inputs, outputs),
// constants and outputs.
onnx::GraphProto& branch(onnx::NodeProto& node, const std::string& name) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return *a->mutable_g();
}

onnx::NodeProto& add(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  for (const std::string& in : inputs) n->add_input(in);
  for (const std::string& out : outputs) n->add_output(out);
  return *n;
}

// x.squeeze(1) as PyTorch exports it: If (x.shape[1] == 1) then Squeeze else Identity.
OnnxBuilder squeeze_model(const std::vector<int64_t>& dims) {
  OnnxBuilder b(13);
  b.input("x", dims).output("y").int_initializer("one", {}, {1}).int_initializer("axis", {1}, {1});
  b.node("Shape", {"x"}, {"shape"});
  set_attr(b.node("Gather", {"shape", "one"}, {"dim"}), "axis", int64_t{0});
  b.node("Equal", {"dim", "one"}, {"is_one"});
  onnx::NodeProto& n = b.node("If", {"is_one"}, {"s"}, "squeeze_if");
  onnx::GraphProto& then = branch(n, "then_branch");
  add(then, "Squeeze", {"x", "axis"}, {"squeezed"});
  then.add_output()->set_name("squeezed");
  onnx::GraphProto& other = branch(n, "else_branch");
  add(other, "Identity", {"x"}, {"same"});
  other.add_output()->set_name("same");
  b.node("Relu", {"s"}, {"y"});
  return b;
}

std::vector<float> run(const OnnxBuilder& b, const std::vector<float>& x, Shape* shape) {
  auto model = compile(load_onnx(b.save("model.onnx")));
  Session s(model);
  s.set_input("x", x);
  s.run();
  *shape = s.shape("y");
  auto y = s.output("y");
  return {y.begin(), y.end()};
}

TEST(IfBranches, TheBranchAKnownConditionPicksRuns) {
  const std::vector<float> x = {1, -2, 3, -4, 5, -6};
  Shape shape;
  EXPECT_EQ(run(squeeze_model({2, 1, 3}), x, &shape), (std::vector<float>{1, 0, 3, 0, 5, 0}));
  EXPECT_EQ(shape, (Shape{2, 3}));
  EXPECT_EQ(run(squeeze_model({1, 2, 3}), x, &shape), (std::vector<float>{1, 0, 3, 0, 5, 0}));
  EXPECT_EQ(shape, (Shape{1, 2, 3}));  // the else branch: no Squeeze, which would fail on 2
}

// A branch's own constant, and an If inside a branch reading a value of the branch
// around it: y = -(x + 10) through two levels.
TEST(IfBranches, NestedBranchesReadTheScopesAroundThem) {
  OnnxBuilder b(13);
  b.input("x", {3}).output("y").int_initializer("yes", {}, {1});
  set_attr(b.node("Cast", {"yes"}, {"cond"}), "to", int64_t{onnx::TensorProto::BOOL});
  onnx::NodeProto& outer = b.node("If", {"cond"}, {"y"}, "outer");
  onnx::GraphProto& then = branch(outer, "then_branch");
  onnx::TensorProto* ten = then.add_initializer();
  ten->set_name("ten");
  ten->set_data_type(onnx::TensorProto::FLOAT);
  ten->add_float_data(10);
  add(then, "Add", {"x", "ten"}, {"shifted"});
  onnx::NodeProto& inner = add(then, "If", {"cond"}, {"negated"});
  inner.set_name("inner");
  onnx::GraphProto& inner_then = branch(inner, "then_branch");
  add(inner_then, "Neg", {"shifted"}, {"n"});
  inner_then.add_output()->set_name("n");
  onnx::GraphProto& inner_else = branch(inner, "else_branch");
  inner_else.add_output()->set_name("shifted");
  then.add_output()->set_name("negated");
  onnx::GraphProto& other = branch(outer, "else_branch");
  other.add_output()->set_name("x");
  Shape shape;
  EXPECT_EQ(run(b, {1, 2, 3}, &shape), (std::vector<float>{-11, -12, -13}));
}

TEST(IfBranches, AConditionComputedAtRunTimeIsRefused) {
  OnnxBuilder b(13);
  b.input("x", {3}).output("y").initializer("zero", {}, {0});
  b.node("ReduceSum", {"x"}, {"sum"});
  b.node("Greater", {"sum", "zero"}, {"positive"});
  onnx::NodeProto& n = b.node("If", {"positive"}, {"y"}, "data_if");
  branch(n, "then_branch").add_output()->set_name("x");
  onnx::GraphProto& other = branch(n, "else_branch");
  add(other, "Neg", {"x"}, {"n"});
  other.add_output()->set_name("n");
  const std::string path = b.save("model.onnx");
  try {
    compile(load_onnx(path));
    ADD_FAILURE() << "compiled";
  } catch (const UnsupportedModelError& e) {
    EXPECT_EQ(std::string(e.what()), path +
                                         ": node 'data_if' (If): its condition is computed at run time; an If runs "
                                         "only when its condition is known as the model compiles (a constant, or "
                                         "computed from shapes)");
  }
}

}  // namespace
}  // namespace minfer::test
