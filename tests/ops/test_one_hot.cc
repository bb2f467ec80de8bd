// OneHot against values worked by hand: the index's position on the new axis gets
// values[1], the rest values[0]; negative indices count from the end, out-of-range ones
// set nothing.
#include <gtest/gtest.h>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

Attributes axis(int64_t a) {
  Attributes attrs;
  attrs.set("axis", a);
  return attrs;
}

TEST(OneHot, PutsOnAtTheIndexAlongTheNewAxis) {
  // Indices [1, -1, 5, 0] (-1 is 2 of depth 3; 5 is out of range), off 0.5, on 7.
  const TestTensor indices = input({2, 2}, {1, -1, 5, 0});
  const TestTensor depth = weight({}, {3}), values = weight({2}, {0.5f, 7});
  const OpResult last = run_op("OneHot", {indices, depth, values});
  ASSERT_EQ(last.shapes[0], (Shape{2, 2, 3}));
  EXPECT_EQ(last.outputs[0], (std::vector<float>{0.5f, 7, 0.5f, 0.5f, 0.5f, 7,  //
                                                 0.5f, 0.5f, 0.5f, 7, 0.5f, 0.5f}));
  const OpResult first = run_op("OneHot", {indices, depth, values}, axis(0));
  ASSERT_EQ(first.shapes[0], (Shape{3, 2, 2}));
  EXPECT_EQ(first.outputs[0], (std::vector<float>{0.5f, 0.5f, 0.5f, 7,  // 0
                                                  7, 0.5f, 0.5f, 0.5f,  // 1
                                                  0.5f, 7, 0.5f, 0.5f}));
  EXPECT_EQ(last.cost.flops, 0);
  EXPECT_EQ(compile_error("OneHot", {indices, weight({}, {0}), values}),
            "<test>: node 'node' (OneHot): depth must be one positive number");
}

}  // namespace
}  // namespace minfer::test
