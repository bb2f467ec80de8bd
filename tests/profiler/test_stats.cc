#include <gtest/gtest.h>

#include <cmath>

#include "profiler/stats.h"

namespace minfer {
namespace {

TEST(TimingStats, HandComputed) {
  TimingStats s = summarize({4.0, 1.0, 3.0, 2.0});
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.first, 4.0);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 4.0);
  EXPECT_EQ(s.mean, 2.5);
  EXPECT_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(1.25));
  EXPECT_EQ(summarize({5.0, 1.0, 3.0}).median, 3.0);
  EXPECT_EQ(summarize({}).count, 0);
}

}  // namespace
}  // namespace minfer
