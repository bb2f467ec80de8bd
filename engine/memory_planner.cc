#include "engine/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace minfer {

namespace {

int64_t aligned_size(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

// The placed buffers, indexed by lifetime so that placing one only looks at those alive
// at the same time: a segment tree over steps whose nodes hold the buffers that cover
// their whole range. A query visits the nodes that meet the asked range, so a chain of
// short-lived buffers is planned in near-linear time instead of comparing every pair.
class LifetimeIndex {
 public:
  LifetimeIndex(int steps, size_t buffers) : steps_(std::max(steps, 1)), seen_(buffers, 0) {
    size_t size = 1;
    while (size < static_cast<size_t>(steps_)) size *= 2;
    nodes_.resize(2 * size);
  }

  void insert(size_t buffer, int first, int last) { insert(1, 0, steps_ - 1, first, last, buffer); }

  // Every inserted buffer alive at some step of [first, last], each once.
  void alive_during(int first, int last, std::vector<size_t>& out) {
    out.clear();
    ++stamp_;
    query(1, 0, steps_ - 1, first, last, out);
  }

 private:
  void insert(size_t node, int lo, int hi, int first, int last, size_t buffer) {
    if (last < lo || hi < first) return;
    if (first <= lo && hi <= last) {
      nodes_[node].push_back(buffer);
      return;
    }
    const int mid = lo + (hi - lo) / 2;
    insert(2 * node, lo, mid, first, last, buffer);
    insert(2 * node + 1, mid + 1, hi, first, last, buffer);
  }

  void query(size_t node, int lo, int hi, int first, int last, std::vector<size_t>& out) {
    if (last < lo || hi < first) return;
    for (size_t b : nodes_[node])
      if (seen_[b] != stamp_) {
        seen_[b] = stamp_;
        out.push_back(b);
      }
    if (lo == hi) return;
    const int mid = lo + (hi - lo) / 2;
    query(2 * node, lo, mid, first, last, out);
    query(2 * node + 1, mid + 1, hi, first, last, out);
  }

  int steps_;
  std::vector<std::vector<size_t>> nodes_;
  std::vector<uint64_t> seen_;  // the query that last reported each buffer
  uint64_t stamp_ = 0;
};

}  // namespace

int64_t live_bytes_lower_bound(const std::vector<BufferSpan>& requests, int64_t alignment) {
  int last = -1;
  for (const BufferSpan& r : requests) last = std::max(last, r.last_step);
  // Bytes that start and stop being alive at each step, summed in one sweep.
  std::vector<int64_t> change(static_cast<size_t>(last + 2), 0);
  for (const BufferSpan& r : requests) {
    change[r.first_step] += aligned_size(r.bytes, alignment);
    change[r.last_step + 1] -= aligned_size(r.bytes, alignment);
  }
  int64_t live = 0, best = 0;
  for (int step = 0; step <= last; ++step) best = std::max(best, live += change[step]);
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

  int steps = 0;
  for (const BufferSpan& r : requests) steps = std::max(steps, r.last_step + 1);
  LifetimeIndex placed(steps, requests.size());
  int64_t arena_bytes = 0;
  std::vector<size_t> live;
  for (size_t r : by_size) {
    BufferSpan& req = requests[r];
    // Live neighbours sorted by offset; take the first gap that fits.
    placed.alive_during(req.first_step, req.last_step, live);
    std::sort(live.begin(), live.end(), [&](size_t a, size_t b) { return requests[a].offset < requests[b].offset; });
    int64_t offset = 0;
    for (size_t p : live) {
      if (requests[p].offset >= offset + aligned(req.bytes)) break;
      offset = std::max(offset, requests[p].offset + aligned(requests[p].bytes));
    }
    req.offset = offset;
    arena_bytes = std::max(arena_bytes, offset + aligned(req.bytes));
    placed.insert(r, req.first_step, req.last_step);
  }
  return arena_bytes;
}

}  // namespace minfer
