// The greedy-by-size planner on hand-made lifetimes whose optimal layout is known.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "engine/memory_planner.h"

namespace minfer {
namespace {

BufferSpan buffer(int64_t bytes, int first, int last) {
  return {"", {}, 0, bytes, first, last};
}

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

// The greedy-by-size rule written plainly: each buffer, largest first, at the lowest
// offset clear of every already-placed buffer alive at the same time.
std::vector<int64_t> plain_greedy(const std::vector<BufferSpan>& r) {
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
    std::vector<BufferSpan> r(1 + rng() % 30);
    for (BufferSpan& b : r) {
      b.bytes = 1 + static_cast<int64_t>(rng() % 6) * 40;  // few sizes: many ties
      b.first_step = static_cast<int>(rng() % steps);
      b.last_step = b.first_step + static_cast<int>(rng() % (trial % 2 ? 3 : steps));
    }
    plan_memory(r, 64);
    ASSERT_EQ(offsets(r), plain_greedy(r)) << "trial " << trial;
    expect_no_live_overlap(r);
    int64_t best = 0;
    for (int step = 0; step < 2 * steps; ++step) {
      int64_t live = 0;
      for (const BufferSpan& b : r)
        if (b.first_step <= step && step <= b.last_step) live += (b.bytes + 63) / 64 * 64;
      best = std::max(best, live);
    }
    EXPECT_EQ(live_bytes_lower_bound(r, 64), best);
  }
}

}  // namespace
}  // namespace minfer
