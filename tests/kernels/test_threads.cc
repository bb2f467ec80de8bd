// The threading policy of the kernels (ops/kernels/threads.h): how many threads a piece
// of work is worth, and a team of one that opens no parallel region.
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <vector>

#include "ops/kernels/threads.h"

namespace minfer::kernels {
namespace {

TEST(Threads, WorthStartingByRelation) {
  // Never more than asked for, nor than there are pieces; too little work stays on one.
  EXPECT_EQ(threads_worth_starting(int64_t{1} << 40, 1, 2, Work::kDense), 1);
  EXPECT_EQ(threads_worth_starting(int64_t{1} << 40, 100, 2, Work::kDense), 2);
  EXPECT_EQ(threads_worth_starting(int64_t{1} << 40, 100, 1, Work::kDense), 1);
  EXPECT_EQ(threads_worth_starting(1000, 100, 2, Work::kDense), 1);
  const int64_t macs = min_macs_per_thread(Work::kDense);
  EXPECT_EQ(threads_worth_starting(2 * macs, 100, 2, Work::kDense), 2);
  EXPECT_EQ(threads_worth_starting(2 * macs - 1, 100, 2, Work::kDense), 1);
  EXPECT_LT(min_macs_per_thread(Work::kStreaming), min_macs_per_thread(Work::kDense));
}

// A team of one runs on the caller outside any parallel region (so work split inside it
// uses the top-level thread pool rather than a nested team created per call); a larger
// team runs every index exactly once.
TEST(Threads, TeamOfOneOpensNoParallelRegion) {
  std::vector<int> levels;
  for_each_on_team(1, 3, [&](int64_t) { levels.push_back(omp_get_level()); });
  EXPECT_EQ(levels, std::vector<int>(3, 0));
  std::vector<std::atomic<int>> seen(101);
  std::atomic<int> max_level{0};
  for_each_on_team(2, 101, [&](int64_t i) {
    seen[i]++;
    max_level = std::max(max_level.load(), omp_get_level());
  });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  EXPECT_EQ(max_level.load(), 1);
}

}  // namespace
}  // namespace minfer::kernels
