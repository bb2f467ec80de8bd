// Compile-time constant folding: a node whose inputs are all known runs its own kernel
// once and becomes a constant. Op by op, against values worked out by hand from ONNX's
// definitions (ctest onnx_conformance_node_folded runs ONNX's node tests through it too).
#include <gtest/gtest.h>

#include <climits>
#include <optional>

#include "engine/compiled_model.h"
#include "graph/errors.h"

namespace minfer {
namespace {

// A known input (an initializer), or one known only at run time (a graph input).
struct Arg {
  std::optional<Tensor> value;
  TensorType type;
};
Arg known(Tensor t) {
  return {std::move(t), {}};
}
Arg runtime(Shape shape) {
  return {std::nullopt, {DType::kFloat32, std::move(shape)}};
}

Tensor ints(Shape shape, std::vector<int64_t> v) {
  return Tensor(std::move(shape), std::move(v));
}
Tensor floats(Shape shape, std::vector<float> v) {
  return Tensor(std::move(shape), std::move(v));
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  const auto v = t.values<T>();
  return {v.begin(), v.end()};
}

Attributes attrs(std::initializer_list<std::pair<const std::string, AttrValue>> list) {
  Attributes a;
  for (const auto& [name, value] : list) a.set(name, value);
  return a;
}

Graph one_node(const std::string& op, const std::vector<Arg>& in, Attributes attributes, int opset) {
  Graph g;
  g.source = "<fold>";
  g.opset = opset;
  Node n{"n", op, {}, {"y"}, std::move(attributes)};
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    n.inputs.push_back(name);
    if (in[i].value)
      g.initializers[name] = *in[i].value;
    else
      g.inputs.push_back({name, in[i].type.shape, in[i].type.dtype});
  }
  g.nodes.push_back(std::move(n));
  g.outputs = {"y"};
  return g;
}

// The folded output of a one-node graph; fails the test when the node did not fold.
Tensor fold1(const std::string& op, const std::vector<Arg>& in, Attributes attributes = {}, int opset = 13) {
  FoldedGraph f = fold_graph(one_node(op, in, std::move(attributes), opset), int64_t{1} << 30);
  EXPECT_TRUE(f.graph.nodes.empty()) << op << " did not fold";
  return f.graph.initializers.at("y");
}

TEST(ConstantFolding, ShapeNeedsOnlyTheShape) {
  const Arg x = runtime({2, 3, 4});
  EXPECT_EQ(values<int64_t>(fold1("Shape", {x})), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(values<int64_t>(fold1("Shape", {x}, attrs({{"start", int64_t{-2}}}))), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(values<int64_t>(fold1("Shape", {x}, attrs({{"start", int64_t{1}}, {"end", int64_t{-1}}}))),
            (std::vector<int64_t>{3}));
  EXPECT_EQ(values<int64_t>(fold1("Size", {x})), (std::vector<int64_t>{24}));
  // An op that reads its input's values stays in the graph.
  EXPECT_EQ(fold_graph(one_node("Relu", {x}, {}, 13)).graph.nodes.size(), 1u);
}

TEST(ConstantFolding, SliceClampsAndSteps) {
  const Tensor x = ints({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto slice = [&](int64_t start, int64_t end, int64_t step) {
    return values<int64_t>(fold1("Slice", {known(x), known(ints({1}, {start})), known(ints({1}, {end})),
                                           known(ints({1}, {0})), known(ints({1}, {step}))}));
  };
  EXPECT_EQ(slice(-3, INT64_MAX, 1), (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(slice(1, 8, 3), (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(slice(INT64_MAX, INT64_MIN, -1), (std::vector<int64_t>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(slice(8, 1, -3), (std::vector<int64_t>{8, 5, 2}));
  EXPECT_EQ(slice(20, 30, 1), (std::vector<int64_t>{}));
  // Opset 9 takes starts/ends/axes as attributes; here on axis 1 of a 2x3.
  const Tensor y = fold1(
      "Slice", {known(floats({2, 3}, {1, 2, 3, 4, 5, 6}))},
      attrs(
          {{"starts", std::vector<int64_t>{1}}, {"ends", std::vector<int64_t>{-1}}, {"axes", std::vector<int64_t>{1}}}),
      9);
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{2, 5}));
}

TEST(ConstantFolding, GatherConcatTransposeExpand) {
  const Tensor m = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor g = fold1("Gather", {known(m), known(ints({2}, {-1, 0}))}, attrs({{"axis", int64_t{1}}}));
  EXPECT_EQ(g.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(g), (std::vector<int64_t>{3, 1, 6, 4}));
  const Tensor row = fold1("Gather", {known(m), known(ints({}, {1}))});
  EXPECT_EQ(row.shape(), (Shape{3}));
  EXPECT_EQ(values<int64_t>(row), (std::vector<int64_t>{4, 5, 6}));

  const Tensor col = ints({2, 1}, {7, 8});
  const Tensor c = fold1("Concat", {known(m), known(col)}, attrs({{"axis", int64_t{-1}}}));
  EXPECT_EQ(c.shape(), (Shape{2, 4}));
  EXPECT_EQ(values<int64_t>(c), (std::vector<int64_t>{1, 2, 3, 7, 4, 5, 6, 8}));
  EXPECT_THROW(fold1("Concat", {known(m), known(col)}, attrs({{"axis", int64_t{0}}})), ModelError);

  const Tensor t = fold1("Transpose", {known(m)});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int64_t>(t), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));

  const Tensor e = fold1("Expand", {known(col), known(ints({3}, {2, 1, 2}))});  // [2,1] -> [2,2,2]
  EXPECT_EQ(e.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(values<int64_t>(e), (std::vector<int64_t>{7, 7, 8, 8, 7, 7, 8, 8}));
}

// Mod as numpy computes it: with fmod 0 (np.mod, int64 only) the remainder takes the
// divisor's sign, with fmod 1 (np.fmod) the dividend's; INT64_MIN mod -1 is 0.
TEST(ConstantFolding, ModTakesTheDivisorsSignOrWithFmodTheDividends) {
  const Tensor a = ints({6}, {-7, 7, -7, 7, 6, INT64_MIN}), b = ints({6}, {3, -3, -3, 3, -3, -1});
  EXPECT_EQ(values<int64_t>(fold1("Mod", {known(a), known(b)})), (std::vector<int64_t>{2, -2, -1, 1, 0, 0}));
  EXPECT_EQ(values<int64_t>(fold1("Mod", {known(a), known(b)}, attrs({{"fmod", int64_t{1}}}))),
            (std::vector<int64_t>{-1, 1, -1, 1, 0, 0}));
  EXPECT_THROW(fold1("Mod", {known(a), known(ints({}, {0}))}), ModelError);
  // Swin Transformer's (window - H % window) % window, broadcast over a scalar.
  EXPECT_EQ(values<int64_t>(fold1("Mod", {known(ints({2}, {56, 60})), known(ints({}, {7}))})),
            (std::vector<int64_t>{0, 4}));
  const Tensor f = floats({3}, {-7.5f, 7.5f, 5.0f});
  EXPECT_EQ(values<float>(fold1("Mod", {known(f), known(floats({}, {2.0f}))}, attrs({{"fmod", int64_t{1}}}))),
            (std::vector<float>{-1.5f, 1.5f, 1.0f}));
  EXPECT_THROW(fold1("Mod", {known(f), known(floats({}, {2.0f}))}), ModelError);  // float needs fmod 1
  EXPECT_THROW(fold1("Mod", {known(a), known(b)}, attrs({{"fmod", int64_t{2}}})), ModelError);
}

TEST(ConstantFolding, ArithmeticCastAndRange) {
  const Tensor a = ints({2}, {-7, 7}), b = ints({}, {2});
  EXPECT_EQ(values<int64_t>(fold1("Div", {known(a), known(b)})), (std::vector<int64_t>{-3, 3}));  // truncation
  EXPECT_EQ(values<int64_t>(fold1("Mul", {known(a), known(b)})), (std::vector<int64_t>{-14, 14}));
  EXPECT_THROW(fold1("Div", {known(a), known(ints({}, {0}))}), ModelError);
  const Tensor big = ints({}, {INT64_MAX});
  EXPECT_THROW(fold1("Add", {known(big), known(big)}), ModelError);
  EXPECT_EQ(values<int64_t>(fold1("Neg", {known(a)})), (std::vector<int64_t>{7, -7}));
  const Tensor eq = fold1("Equal", {known(a), known(ints({2}, {-7, 0}))});
  EXPECT_EQ(eq.dtype(), DType::kBool);
  EXPECT_EQ(values<uint8_t>(eq), (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(values<int64_t>(fold1("Where", {known(eq), known(a), known(b)})), (std::vector<int64_t>{-7, 2}));

  const Tensor f = floats({3}, {-1.7f, 2.9f, 0.0f});
  const Tensor as_int = fold1("Cast", {known(f)}, attrs({{"to", int64_t{7}}}));
  EXPECT_EQ(as_int.dtype(), DType::kInt64);
  EXPECT_EQ(values<int64_t>(as_int), (std::vector<int64_t>{-1, 2, 0}));
  EXPECT_EQ(values<uint8_t>(fold1("Cast", {known(f)}, attrs({{"to", int64_t{9}}}))), (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_THROW(fold1("Cast", {known(f)}, attrs({{"to", int64_t{8}}})), UnsupportedModelError);  // string

  EXPECT_EQ(values<int64_t>(fold1("Range", {known(ints({}, {10})), known(ints({}, {1})), known(ints({}, {-4}))})),
            (std::vector<int64_t>{10, 6, 2}));
  EXPECT_THROW(fold1("Range", {known(ints({}, {INT64_MIN})), known(ints({}, {INT64_MAX})), known(ints({}, {1}))}),
               ModelError);  // overflows
  EXPECT_EQ(
      values<float>(fold1("Range", {known(floats({}, {0.5f})), known(floats({}, {2.0f})), known(floats({}, {0.5f}))})),
      (std::vector<float>{0.5f, 1.0f, 1.5f}));
}

TEST(ConstantFolding, ConstantsAndShapeOps) {
  EXPECT_EQ(values<int64_t>(fold1("Constant", {}, attrs({{"value_ints", std::vector<int64_t>{4, 5}}}))),
            (std::vector<int64_t>{4, 5}));
  EXPECT_THROW(fold1("Constant", {}, attrs({{"value_ints", std::vector<int64_t>{4}}, {"value", floats({}, {1})}})),
               ModelError);  // two values

  const Tensor filled = fold1("ConstantOfShape", {known(ints({2}, {2, 3}))}, attrs({{"value", ints({1}, {7})}}));
  EXPECT_EQ(filled.dtype(), DType::kInt64);
  EXPECT_EQ(filled.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(filled), std::vector<int64_t>(6, 7));
  try {  // 2^40 elements: refused, not allocated
    fold1("ConstantOfShape", {known(ints({2}, {1 << 20, 1 << 20}))});
    ADD_FAILURE() << "folded a tensor over the memory limit";
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(),
                 "<fold>: node 'n' (ConstantOfShape): output 'y' of shape 1048576x1048576 needs 4 TiB: over the memory "
                 "limit of 1 GiB (--max_memory)");
  }
  // Gather checks the size of what it builds before building it.
  const Tensor wide = ints({1, 1 << 20}, std::vector<int64_t>(1 << 20, 1));
  EXPECT_THROW(fold1("Gather", {known(wide), known(ints({1 << 10}, std::vector<int64_t>(1 << 10, 0)))}),
               ModelError);  // 2^30 elements

  // Reshape, Squeeze and Unsqueeze fold through the ops that run them.
  const Tensor x = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor r = fold1("Reshape", {known(x), known(ints({2}, {-1, 2}))});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int64_t>(r), values<int64_t>(x));
  EXPECT_EQ(fold1("Unsqueeze", {known(x)}, attrs({{"axes", std::vector<int64_t>{0, -1}}}), 11).shape(),
            (Shape{1, 2, 3, 1}));
  EXPECT_THROW(fold1("Squeeze", {known(x), known(ints({1}, {1}))}), ModelError);  // axis 1 has size 3
}

TEST(ConstantFolding, AnyOpWithKnownInputsFolds) {
  // A Conv whose input is a constant is computed once, at compile time.
  const Tensor x = floats({1, 1, 2, 2}, {1, 2, 3, 4}), w = floats({1, 1, 1, 1}, {2});
  EXPECT_EQ(values<float>(fold1("Conv", {known(x), known(w)})), (std::vector<float>{2, 4, 6, 8}));
}

}  // namespace
}  // namespace minfer
