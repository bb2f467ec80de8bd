// The greedy-by-size planner on hand-made lifetimes whose optimal layout is known.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace minfer
