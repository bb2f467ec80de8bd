// The greedy-by-size planner on hand-made lifetimes whose optimal layout is known.
#include <gtest/gtest.h>

#include "engine/memory_planner.h"

namespace minfer {
namespace {

BufferSpan buffer(int64_t bytes, int first, int last) { return {"", {}, 0, bytes, first, last}; }

std::vector<int64_t> offsets(const std::vector<BufferSpan>& buffers) {
  std::vector<int64_t> out;
  for (const BufferSpan& b : buffers) out.push_back(b.offset);
  return out;
}

// No two buffers that are alive at the same step may overlap in the arena.
void expect_no_live_overlap(const std::vector<BufferSpan>& r) {
  for (size_t i = 0; i < r.size(); ++i)
    for (size_t j = i + 1; j < r.size(); ++j) {
      const bool live_together = r[i].first_step <= r[j].last_step && r[j].first_step <= r[i].last_step;
      const bool overlap = r[i].offset < r[j].offset + r[j].bytes && r[j].offset < r[i].offset + r[i].bytes;
      EXPECT_FALSE(live_together && overlap) << i << " and " << j;
    }
}

TEST(MemoryPlanner, ChainReusesTwoBuffers) {
  // a -> b -> c -> d, each 64 bytes: at most two alive at once, so 128 bytes suffice.
  std::vector<BufferSpan> r = {buffer(64, 0, 1), buffer(64, 1, 2), buffer(64, 2, 3), buffer(64, 3, 3)};
  EXPECT_EQ(plan_memory(r, 64), 128);
  EXPECT_EQ(offsets(r), (std::vector<int64_t>{0, 64, 0, 64}));
  expect_no_live_overlap(r);
}

TEST(MemoryPlanner, LargestFirstFillsGaps) {
  // A 256-byte buffer alive throughout; two 128-byte buffers alive at disjoint times
  // share one slot after it; a 64-byte one alive with both goes after them.
  std::vector<BufferSpan> r = {buffer(128, 0, 1), buffer(256, 0, 3), buffer(128, 2, 3), buffer(64, 0, 3)};
  EXPECT_EQ(plan_memory(r, 64), 448);
  EXPECT_EQ(offsets(r), (std::vector<int64_t>{256, 0, 256, 384}));
  expect_no_live_overlap(r);
}

TEST(MemoryPlanner, AlignsEveryOffset) {
  std::vector<BufferSpan> r = {buffer(10, 0, 0), buffer(10, 0, 0), buffer(100, 0, 0)};
  EXPECT_EQ(plan_memory(r, 64), 128 + 64 + 64);
  for (int64_t o : offsets(r)) EXPECT_EQ(o % 64, 0);
  expect_no_live_overlap(r);
}

TEST(MemoryPlanner, EmptyPlan) {
  std::vector<BufferSpan> none;
  EXPECT_EQ(plan_memory(none, 64), 0);
}

}  // namespace
}  // namespace minfer
