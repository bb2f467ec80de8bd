// The greedy-by-size planner on hand-made lifetimes whose optimal layout is known.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "engine/memory_planner.h"

namespace minfer {
namespace {

// No two buffers that are alive at the same step may overlap in the arena.
void expect_no_live_overlap(const std::vector<BufferRequest>& r, const MemoryPlan& p) {
  for (size_t i = 0; i < r.size(); ++i)
    for (size_t j = i + 1; j < r.size(); ++j) {
      const bool live_together = r[i].first_step <= r[j].last_step && r[j].first_step <= r[i].last_step;
      const bool overlap = p.offsets[i] < p.offsets[j] + r[j].bytes && p.offsets[j] < p.offsets[i] + r[i].bytes;
      EXPECT_FALSE(live_together && overlap) << i << " and " << j;
    }
}

TEST(MemoryPlanner, ChainReusesTwoBuffers) {
  // a -> b -> c -> d, each 64 bytes: at most two alive at once, so 128 bytes suffice.
  std::vector<BufferRequest> r = {{64, 0, 1}, {64, 1, 2}, {64, 2, 3}, {64, 3, 3}};
  MemoryPlan p = plan_memory(r, 64);
  EXPECT_EQ(p.arena_bytes, 128);
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 64, 0, 64}));
  expect_no_live_overlap(r, p);
}

TEST(MemoryPlanner, LargestFirstFillsGaps) {
  // A 256-byte buffer alive throughout; two 128-byte buffers alive at disjoint times
  // share one slot after it; a 64-byte one alive with both goes after them.
  std::vector<BufferRequest> r = {{128, 0, 1}, {256, 0, 3}, {128, 2, 3}, {64, 0, 3}};
  MemoryPlan p = plan_memory(r, 64);
  EXPECT_EQ(p.offsets[1], 0);
  EXPECT_EQ(p.offsets[0], 256);
  EXPECT_EQ(p.offsets[2], 256);
  EXPECT_EQ(p.offsets[3], 384);
  EXPECT_EQ(p.arena_bytes, 448);
  expect_no_live_overlap(r, p);
}

TEST(MemoryPlanner, AlignsEveryOffset) {
  std::vector<BufferRequest> r = {{10, 0, 0}, {10, 0, 0}, {100, 0, 0}};
  MemoryPlan p = plan_memory(r, 64);
  for (int64_t o : p.offsets) EXPECT_EQ(o % 64, 0);
  EXPECT_EQ(p.arena_bytes, 128 + 64 + 64);
  expect_no_live_overlap(r, p);
}

TEST(MemoryPlanner, EmptyPlan) {
  MemoryPlan p = plan_memory({}, 64);
  EXPECT_EQ(p.arena_bytes, 0);
}

// The greedy-by-size rule written plainly: each buffer, largest first, at the lowest
// offset clear of every already-placed buffer alive at the same time.
std::vector<int64_t> plain_greedy(const std::vector<BufferRequest>& r) {
  std::vector<size_t> order(r.size());
  for (size_t i = 0; i < r.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return r[a].bytes != r[b].bytes ? r[a].bytes > r[b].bytes : r[a].first_step < r[b].first_step;
  });
  std::vector<int64_t> offsets(r.size(), -1);
  auto size = [](int64_t b) { return (b + 63) / 64 * 64; };
  for (size_t i : order) {
    for (int64_t offset = 0;; offset += 64) {
      bool clear = true;
      for (size_t j = 0; j < r.size() && clear; ++j)
        clear = offsets[j] < 0 || r[j].last_step < r[i].first_step || r[i].last_step < r[j].first_step ||
                offsets[j] + size(r[j].bytes) <= offset || offset + size(r[i].bytes) <= offsets[j];
      if (clear) {
        offsets[i] = offset;
        break;
      }
    }
  }
  return offsets;
}

// The planner only compares a buffer with those whose lifetimes overlap it (a lifetime
// index): the plans are the plain rule's, and the lower bound the plain per-step maximum.
TEST(MemoryPlanner, SameAsThePlainRuleOnRandomLifetimes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int steps = 1 + static_cast<int>(rng() % 40);
    std::vector<BufferRequest> r(1 + rng() % 30);
    for (BufferRequest& b : r) {
      b.bytes = 1 + static_cast<int64_t>(rng() % 6) * 40;  // few sizes: many ties
      b.first_step = static_cast<int>(rng() % steps);
      b.last_step = b.first_step + static_cast<int>(rng() % (trial % 2 ? 3 : steps));
    }
    const MemoryPlan p = plan_memory(r, 64);
    ASSERT_EQ(p.offsets, plain_greedy(r)) << "trial " << trial;
    expect_no_live_overlap(r, p);
    int64_t best = 0;
    for (int step = 0; step < 2 * steps; ++step) {
      int64_t live = 0;
      for (const BufferRequest& b : r)
        if (b.first_step <= step && step <= b.last_step) live += (b.bytes + 63) / 64 * 64;
      best = std::max(best, live);
    }
    EXPECT_EQ(live_bytes_lower_bound(r, 64), best);
  }
}

}  // namespace
}  // namespace minfer
