// The load-time constant folder, op by op, against values worked out by hand from
// ONNX's definitions (ctest onnx_conformance_node_folded runs ONNX's own node tests of
// the same ops through it as well).
#include <gtest/gtest.h>

#include <climits>

#include "graph/constant_folding.h"
#include "graph/errors.h"

namespace minfer {
namespace {

FoldInput known(const TypedTensor& t) {
  return {&t, t.shape, true};
}

const MemoryBudget kBudget(int64_t{1} << 30);

TypedTensor fold1(const std::string& op, const std::vector<FoldInput>& in, Attributes attrs = {}, int opset = 13) {
  const FoldNode node{op, opset, std::move(attrs), {}};
  EXPECT_TRUE(can_fold(node, in));
  return fold(node, in, kBudget).at(0);
}

Attributes attrs(std::initializer_list<std::pair<const std::string, AttrValue>> list) {
  Attributes a;
  for (const auto& [name, value] : list) a.set(name, value);
  return a;
}

TEST(ConstantFolding, ShapeNeedsOnlyTheShape) {
  const FoldInput runtime{nullptr, {2, 3, 4}, true};
  EXPECT_EQ(fold1("Shape", {runtime}).ints, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(fold1("Shape", {runtime}, attrs({{"start", int64_t{-2}}})).ints, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(fold1("Shape", {runtime}, attrs({{"start", int64_t{1}}, {"end", int64_t{-1}}})).ints,
            (std::vector<int64_t>{3}));
  EXPECT_EQ(fold1("Size", {runtime}).ints, (std::vector<int64_t>{24}));
  EXPECT_FALSE(can_fold({"Add", 13, {}, {}}, {runtime, runtime}));
  EXPECT_FALSE(can_fold({"Conv", 13, {}, {}}, {}));
}

TEST(ConstantFolding, SliceClampsAndSteps) {
  const TypedTensor x = int_tensor({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto slice = [&](int64_t start, int64_t end, int64_t step) {
    const TypedTensor s = int_tensor({1}, {start}), e = int_tensor({1}, {end}), axes = int_tensor({1}, {0}),
                      st = int_tensor({1}, {step});
    return fold1("Slice", {known(x), known(s), known(e), known(axes), known(st)}).ints;
  };
  EXPECT_EQ(slice(-3, INT64_MAX, 1), (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(slice(1, 8, 3), (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(slice(INT64_MAX, INT64_MIN, -1), (std::vector<int64_t>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(slice(8, 1, -3), (std::vector<int64_t>{8, 5, 2}));
  EXPECT_EQ(slice(20, 30, 1), (std::vector<int64_t>{}));
  // Opset 9 takes starts/ends/axes as attributes; here on axis 1 of a 2x3.
  const TypedTensor m = real_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  const TypedTensor y = fold1(
      "Slice", {known(m)},
      attrs(
          {{"starts", std::vector<int64_t>{1}}, {"ends", std::vector<int64_t>{-1}}, {"axes", std::vector<int64_t>{1}}}),
      9);
  EXPECT_EQ(y.shape, (Shape{2, 1}));
  EXPECT_EQ(y.reals, (std::vector<double>{2, 5}));
}

TEST(ConstantFolding, GatherConcatTransposeExpand) {
  const TypedTensor m = int_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  const TypedTensor idx = int_tensor({2}, {-1, 0});
  const TypedTensor g = fold1("Gather", {known(m), known(idx)}, attrs({{"axis", int64_t{1}}}));
  EXPECT_EQ(g.shape, (Shape{2, 2}));
  EXPECT_EQ(g.ints, (std::vector<int64_t>{3, 1, 6, 4}));
  const TypedTensor scalar_index = int_tensor({}, {1});
  const TypedTensor row = fold1("Gather", {known(m), known(scalar_index)});
  EXPECT_EQ(row.shape, (Shape{3}));
  EXPECT_EQ(row.ints, (std::vector<int64_t>{4, 5, 6}));

  const TypedTensor col = int_tensor({2, 1}, {7, 8});
  const TypedTensor c = fold1("Concat", {known(m), known(col)}, attrs({{"axis", int64_t{-1}}}));
  EXPECT_EQ(c.shape, (Shape{2, 4}));
  EXPECT_EQ(c.ints, (std::vector<int64_t>{1, 2, 3, 7, 4, 5, 6, 8}));
  EXPECT_THROW(fold1("Concat", {known(m), known(col)}, attrs({{"axis", int64_t{0}}})), OpError);

  const TypedTensor t = fold1("Transpose", {known(m)});
  EXPECT_EQ(t.shape, (Shape{3, 2}));
  EXPECT_EQ(t.ints, (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));

  const TypedTensor shape = int_tensor({3}, {2, 1, 2});
  const TypedTensor e = fold1("Expand", {known(col), known(shape)});  // [2,1] -> [2,2,2]
  EXPECT_EQ(e.shape, (Shape{2, 2, 2}));
  EXPECT_EQ(e.ints, (std::vector<int64_t>{7, 7, 8, 8, 7, 7, 8, 8}));
}

TEST(ConstantFolding, ArithmeticCastAndRange) {
  const TypedTensor a = int_tensor({2}, {-7, 7}), b = int_tensor({}, {2});
  EXPECT_EQ(fold1("Div", {known(a), known(b)}).ints, (std::vector<int64_t>{-3, 3}));  // truncation
  EXPECT_EQ(fold1("Mul", {known(a), known(b)}).ints, (std::vector<int64_t>{-14, 14}));
  const TypedTensor zero = int_tensor({}, {0});
  EXPECT_THROW(fold1("Div", {known(a), known(zero)}), OpError);
  const TypedTensor big = int_tensor({}, {INT64_MAX});
  EXPECT_THROW(fold1("Add", {known(big), known(big)}), OpError);
  const TypedTensor eq = fold1("Equal", {known(a), known(int_tensor({2}, {-7, 0}))});
  EXPECT_EQ(eq.type, DataType::kBool);
  EXPECT_EQ(eq.ints, (std::vector<int64_t>{1, 0}));
  const TypedTensor w = fold1("Where", {known(eq), known(a), known(b)});
  EXPECT_EQ(w.ints, (std::vector<int64_t>{-7, 2}));

  const TypedTensor f = real_tensor({3}, {-1.7, 2.9, 0.0});
  const TypedTensor as_int = fold1("Cast", {known(f)}, attrs({{"to", int64_t{7}}}));
  EXPECT_EQ(as_int.type, DataType::kInt64);
  EXPECT_EQ(as_int.ints, (std::vector<int64_t>{-1, 2, 0}));
  EXPECT_EQ(fold1("Cast", {known(f)}, attrs({{"to", int64_t{9}}})).ints, (std::vector<int64_t>{1, 1, 0}));
  // float32 keeps float32's precision: 0.1 as a float, not as a double.
  const TypedTensor tenth = real_tensor({1}, {0.1}, DataType::kDouble);
  EXPECT_EQ(fold1("Cast", {known(tenth)}, attrs({{"to", int64_t{1}}})).reals[0], static_cast<double>(0.1f));
  EXPECT_THROW(fold1("Cast", {known(f)}, attrs({{"to", int64_t{10}}})), UnsupportedError);  // float16

  const TypedTensor s = int_tensor({}, {10}), l = int_tensor({}, {1}), d = int_tensor({}, {-4});
  EXPECT_EQ(fold1("Range", {known(s), known(l), known(d)}).ints, (std::vector<int64_t>{10, 6, 2}));
  const TypedTensor min = int_tensor({}, {INT64_MIN}), max = int_tensor({}, {INT64_MAX}), one = int_tensor({}, {1});
  EXPECT_THROW(fold1("Range", {known(min), known(max), known(one)}), OpError);  // overflows
  const TypedTensor fs = real_tensor({}, {0.5}), fl = real_tensor({}, {2.0}), fd = real_tensor({}, {0.5});
  EXPECT_EQ(fold1("Range", {known(fs), known(fl), known(fd)}).reals, (std::vector<double>{0.5, 1.0, 1.5}));
}

TEST(ConstantFolding, ConstantsAndShapeOps) {
  FoldNode constant{"Constant", 13, attrs({{"value_ints", std::vector<int64_t>{4, 5}}}), {}};
  EXPECT_EQ(fold(constant, {}, kBudget).at(0).ints, (std::vector<int64_t>{4, 5}));
  constant.tensor_attrs["value"] = real_tensor({}, {1.0});
  EXPECT_THROW(fold(constant, {}, kBudget), OpError);  // two values

  const TypedTensor shape = int_tensor({2}, {2, 3});
  FoldNode fill{"ConstantOfShape", 13, {}, {{"value", int_tensor({1}, {7}, DataType::kInt32)}}};
  const TypedTensor filled = fold(fill, {known(shape)}, kBudget).at(0);
  EXPECT_EQ(filled.type, DataType::kInt32);
  EXPECT_EQ(filled.shape, (Shape{2, 3}));
  EXPECT_EQ(filled.ints, std::vector<int64_t>(6, 7));
  const TypedTensor huge = int_tensor({2}, {1 << 20, 1 << 20});  // 2^40 elements: refused, not allocated
  try {
    fold(fill, {known(huge)}, kBudget);
    ADD_FAILURE() << "folded a tensor over the memory limit";
  } catch (const OpError& e) {
    EXPECT_STREQ(e.what(),
                 "folding a tensor of shape 1048576x1048576 needs 16 TiB: over the memory limit of 1 GiB (--max_memory)");
  }
  // Concat and Gather check the size of what they build before building it.
  const TypedTensor big = int_tensor({1, 1 << 20}, std::vector<int64_t>(1 << 20, 1));
  const TypedTensor zeros = int_tensor({1 << 10}, std::vector<int64_t>(1 << 10, 0));
  EXPECT_THROW(fold1("Gather", {known(big), known(zeros)}), OpError);  // 2^30 elements
  const std::vector<FoldInput> many(1 << 10, known(big));
  EXPECT_THROW(fold1("Concat", many, attrs({{"axis", int64_t{0}}})), OpError);

  // Reshape, Squeeze and Unsqueeze read their attributes through the engine's own ops.
  const TypedTensor x = int_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  const TypedTensor target = int_tensor({2}, {-1, 2});
  const TypedTensor r = fold1("Reshape", {known(x), known(target)});
  EXPECT_EQ(r.shape, (Shape{3, 2}));
  EXPECT_EQ(r.ints, x.ints);
  EXPECT_EQ(fold1("Unsqueeze", {known(x)}, attrs({{"axes", std::vector<int64_t>{0, -1}}}), 11).shape,
            (Shape{1, 2, 3, 1}));
  const TypedTensor axes = int_tensor({1}, {1});
  EXPECT_THROW(fold1("Squeeze", {known(x), known(axes)}), OpError);  // axis 1 has size 3
}

}  // namespace
}  // namespace minfer
