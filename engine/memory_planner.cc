#include "engine/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace minfer {

namespace {
int64_t aligned_size(int64_t bytes, int64_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }
}  // namespace

int64_t live_bytes_lower_bound(const std::vector<BufferSpan>& requests, int64_t alignment) {
  int last = -1;
  for (const BufferSpan& r : requests) last = std::max(last, r.last_step);
  int64_t best = 0;
  for (int step = 0; step <= last; ++step) {
    int64_t live = 0;
    for (const BufferSpan& r : requests)
      if (r.first_step <= step && step <= r.last_step) live += aligned_size(r.bytes, alignment);
    best = std::max(best, live);
  }
  return best;
}

int64_t plan_memory(std::vector<BufferSpan>& requests, int64_t alignment) {
  auto aligned = [&](int64_t b) { return aligned_size(b, alignment); };
  std::vector<size_t> by_size(requests.size());
  std::iota(by_size.begin(), by_size.end(), 0);
  // Largest first; ties by earlier first use, then request order, so plans are deterministic.
  std::stable_sort(by_size.begin(), by_size.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
    return requests[a].first_step < requests[b].first_step;
  });

  int64_t arena_bytes = 0;
  std::vector<size_t> placed;
  for (size_t r : by_size) {
    BufferSpan& req = requests[r];
    // Live neighbours sorted by offset; take the first gap that fits.
    std::vector<size_t> live;
    for (size_t p : placed)
      if (requests[p].first_step <= req.last_step && req.first_step <= requests[p].last_step) live.push_back(p);
    std::sort(live.begin(), live.end(), [&](size_t a, size_t b) { return requests[a].offset < requests[b].offset; });
    int64_t offset = 0;
    for (size_t p : live) {
      if (requests[p].offset >= offset + aligned(req.bytes)) break;
      offset = std::max(offset, requests[p].offset + aligned(requests[p].bytes));
    }
    req.offset = offset;
    arena_bytes = std::max(arena_bytes, offset + aligned(req.bytes));
    placed.push_back(r);
  }
  return arena_bytes;
}

}  // namespace minfer
