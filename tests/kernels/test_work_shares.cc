// WorkShares (ops/kernels/work_shares.h): each thread takes its own share front to back,
// then the others' items from their backs; every item is taken exactly once.
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "ops/kernels/work_shares.h"

namespace minfer::kernels {
namespace {

std::vector<int64_t> take_all(WorkShares& shares, int t) {
  std::vector<int64_t> taken;
  for (int64_t i; (i = shares.take(t)) >= 0;) taken.push_back(i);
  return taken;
}

TEST(WorkShares, OwnShareFrontToBackThenTheOthersFromTheirBacks) {
  WorkShares even(10, 3);  // shares [0, 3), [3, 6), [6, 10)
  EXPECT_EQ(take_all(even, 0), (std::vector<int64_t>{0, 1, 2, 5, 4, 3, 9, 8, 7, 6}));
  EXPECT_EQ(even.take(1), -1);

  WorkShares shares(10, 3);
  EXPECT_EQ(shares.take(1), 3);  // thread 1's own front
  EXPECT_EQ(shares.take(0), 0);
  EXPECT_EQ(take_all(shares, 2), (std::vector<int64_t>{6, 7, 8, 9, 2, 1, 5, 4}));
  EXPECT_EQ(shares.take(0), -1);

  // Uneven bounds, an empty share; a thread beyond the team only takes others' items.
  const std::vector<int64_t> bounds = {0, 4, 4, 6};
  WorkShares uneven(bounds);
  EXPECT_EQ(uneven.team(), 3);
  EXPECT_EQ(uneven.take(1), 5);  // its share is empty: the next thread's back
  EXPECT_EQ(take_all(uneven, 5), (std::vector<int64_t>{3, 2, 1, 0, 4}));
}

TEST(WorkShares, RefusesBoundsOutOfOrderOrRange) {
  const std::vector<int64_t> descending = {0, 5, 3};
  EXPECT_THROW(WorkShares{descending}, std::invalid_argument);
  const std::vector<int64_t> huge = {0, int64_t{1} << 32};
  EXPECT_THROW(WorkShares{huge}, std::invalid_argument);
  EXPECT_THROW(WorkShares(int64_t{1} << 32, 2), std::invalid_argument);
}

// Threads racing for the last items of each other's shares: each taken once, in each
// share's own items first.
TEST(WorkShares, EveryItemTakenOnceUnderContention) {
  constexpr int64_t kItems = 200000;
  for (int team : {2, 3, 4}) {
    WorkShares shares(kItems, team);
    std::vector<std::atomic<int>> taken(kItems);
    std::atomic<int64_t> total{0};
#pragma omp parallel num_threads(team)
    {
      int64_t mine = 0;
      for (int64_t i; (i = shares.take(omp_get_thread_num())) >= 0; ++mine) taken[i]++;
      total += mine;
    }
    EXPECT_EQ(total.load(), kItems) << team << " threads";
    for (int64_t i = 0; i < kItems; ++i) ASSERT_EQ(taken[i].load(), 1) << "item " << i << ", " << team << " threads";
  }
}

}  // namespace
}  // namespace minfer::kernels
