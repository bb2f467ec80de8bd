// Items of work shared by a team of threads with the locality of a static split and the
// balance of a dynamic one. Thread t owns a contiguous share (the rows it copied the
// input of, the output rows the next layer's thread t reads) and takes it front to back;
// once its own share is done it takes the items left in the others' from their backs.
// On a shared host a vCPU that is descheduled, or slower, for part of a layer then holds
// up only the items it is running, where a static split waits at the layer's end for
// its whole share. Each item still runs whole on one thread, in the same order within
// it, so results do not depend on which thread ran it.
//
//   WorkShares shares(items, team);          // before the parallel region
//   #pragma omp parallel num_threads(team)
//   for (int64_t i; (i = shares.take(omp_get_thread_num())) >= 0;) run(i);
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>

namespace minfer::kernels {

class WorkShares {
 public:
  // Thread t of bounds.size() - 1 owns the items [bounds[t], bounds[t + 1]).
  explicit WorkShares(std::span<const int64_t> bounds)
      : team_(static_cast<int>(bounds.size()) - 1), shares_(std::make_unique<Share[]>(checked_team(team_))) {
    for (int t = 0; t < team_; ++t) {
      if (bounds[t] < 0 || bounds[t] > bounds[t + 1] || bounds[t + 1] > kMaxItems)
        throw std::invalid_argument("WorkShares: bounds must ascend within [0, 2^32)");
      shares_[t].front_back.store(pack(bounds[t], bounds[t + 1]), std::memory_order_relaxed);
    }
  }
  // Thread t of `team` owns an even share of `items`: [items t / team, items (t + 1) / team).
  WorkShares(int64_t items, int team) : team_(team), shares_(std::make_unique<Share[]>(checked_team(team))) {
    if (items < 0 || items > kMaxItems) throw std::invalid_argument("WorkShares: items must be within [0, 2^32)");
    for (int t = 0; t < team; ++t)
      shares_[t].front_back.store(pack(items * t / team, items * (t + 1) / team), std::memory_order_relaxed);
  }

  // The next item for thread t (its own share's front, else another's back, the next
  // thread's first), or -1 once every item is taken. A thread past the team takes only
  // others' items; a share whose thread never runs is taken by the others.
  int64_t take(int t) {
    if (t < team_) {
      const int64_t i = take_from(shares_[t], true);
      if (i >= 0) return i;
    }
    for (int k = 1; k <= team_; ++k) {
      const int64_t i = take_from(shares_[(t + k) % team_], false);
      if (i >= 0) return i;
    }
    return -1;
  }

  int team() const { return team_; }

 private:
  static constexpr int64_t kMaxItems = (int64_t{1} << 32) - 1;
  // A share's front (next item its owner takes) and back (one past the last item),
  // one word so that the owner and a thief agree on who takes the last item.
  struct alignas(64) Share {
    std::atomic<uint64_t> front_back{0};
  };
  static size_t checked_team(int team) {
    if (team < 1) throw std::invalid_argument("WorkShares: a team of at least one thread");
    return static_cast<size_t>(team);
  }
  static uint64_t pack(int64_t front, int64_t back) {
    return static_cast<uint64_t>(front) | static_cast<uint64_t>(back) << 32;
  }
  static int64_t take_from(Share& s, bool front) {
    uint64_t word = s.front_back.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t f = static_cast<int64_t>(word & 0xffffffffu), b = static_cast<int64_t>(word >> 32);
      if (f >= b) return -1;
      const uint64_t next = front ? pack(f + 1, b) : pack(f, b - 1);
      if (s.front_back.compare_exchange_weak(word, next, std::memory_order_acq_rel, std::memory_order_relaxed))
        return front ? f : b - 1;
    }
  }

  int team_;
  std::unique_ptr<Share[]> shares_;
};

}  // namespace minfer::kernels
