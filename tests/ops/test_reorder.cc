// Reorder between NCHW and NCHWc: element order against an index loop written here,
// the round trip, its cost (bytes only) and the refusals.
#include <gtest/gtest.h>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

Attributes reorder_to(const std::string& to, int64_t lanes) {
  Attributes a;
  a.set("to", to);
  a.set("lanes", lanes);
  return a;
}

// Tensors too small to share and, on two threads, one large enough for a team of two.
TEST(Reorder, NchwToNchwcAndBack) {
  struct Case {
    int64_t channels_in_blocks, h, w;
  };
  for (const Case& shape : {Case{3, 5, 7}, Case{0, 33, 35}})
    for (int64_t c : {4, 8, 16})
      for (int threads : {1, 2}) {
        const int64_t n = 2, channels = shape.channels_in_blocks ? shape.channels_in_blocks * c : 64;
        const int64_t h = shape.h, w = shape.w;
        const std::vector<float> x = iota_values(n * channels * h * w);
        const OpResult to = run_op("Reorder", {input({n, channels, h, w}, x)}, reorder_to("NCHWc", c), 1, threads);
        ASSERT_EQ(to.shapes[0], (Shape{n, channels / c, h, w, c}));
        const std::vector<float> want = reorder_nchwc(x, n, channels, h * w, c, true);
        EXPECT_EQ(to.outputs[0], want) << c << " lanes";
        const OpResult back =
            run_op("Reorder", {input({n, channels / c, h, w, c}, want)}, reorder_to("NCHW", c), 1, threads);
        ASSERT_EQ(back.shapes[0], (Shape{n, channels, h, w}));
        EXPECT_EQ(back.outputs[0], x) << c << " lanes";
        EXPECT_EQ(to.cost.macs, 0);
        EXPECT_EQ(to.cost.flops, 0);
        EXPECT_EQ(to.cost.bytes_read, n * channels * h * w * 4);
        EXPECT_EQ(to.cost.bytes_written, n * channels * h * w * 4);
      }
}

TEST(Reorder, RefusesChannelsThatAreNotWholeBlocksAndBadAttributes) {
  EXPECT_NE(compile_error("Reorder", {input({1, 12, 2, 2}, iota_values(48))}, reorder_to("NCHWc", 8))
                .find("has no NCHW8c layout"),
            std::string::npos);
  EXPECT_NE(compile_error("Reorder", {input({1, 2, 2, 2, 4}, iota_values(32))}, reorder_to("NCHW", 8))
                .find("is not laid out NCHW8c"),
            std::string::npos);
  EXPECT_NE(compile_error("Reorder", {input({1, 8, 2, 2}, iota_values(32))}, reorder_to("NHWC", 8))
                .find("attribute 'to' must be NCHW or NCHWc"),
            std::string::npos);
  EXPECT_NE(compile_error("Reorder", {input({1, 8, 2, 2}, iota_values(32))}, reorder_to("NCHWc", 0))
                .find("attribute 'lanes' must be positive"),
            std::string::npos);
}

}  // namespace
}  // namespace minfer::test
