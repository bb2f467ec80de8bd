// How many OpenMP threads a kernel starts: the one threading policy of every kernel.
// Never more than asked for or than there are independent pieces of work, and none that
// would get too little work to pay for starting (or waking) it.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace minfer::kernels {

// What a thread's multiply-adds cost decides how many it must get. Starting a thread
// costs a few microseconds; each kind of work needs that many microseconds per thread:
enum class Work {
  kDense,               // GEMM-like products, tens of multiply-adds per ns per core: 2^17 per thread
  kStreaming,           // few multiply-adds per byte (depthwise, direct convolution of few input
                        // channels, pooling, col2im), bound by memory: 2^15 per thread
  kBetweenSerialSteps,  // products between serial element-wise work (an LSTM's steps):
                        // their threads sleep in between and take tens of microseconds
                        // to wake on a shared machine: 2^19 per thread
};

inline constexpr int64_t min_macs_per_thread(Work work) {
  switch (work) {
    case Work::kDense: return int64_t{1} << 17;
    case Work::kStreaming: return int64_t{1} << 15;
    case Work::kBetweenSerialSteps: return int64_t{1} << 19;
  }
  return int64_t{1} << 17;
}

inline int threads_worth_starting(int64_t macs, int64_t work_items, int threads, Work work) {
  const int64_t useful = std::min<int64_t>(work_items, std::max<int64_t>(1, macs / min_macs_per_thread(work)));
  return static_cast<int>(std::clamp<int64_t>(useful, 1, std::max(threads, 1)));
}

// fn(i) for i in [0, count), split statically over a team of `team` threads. A team of
// one runs on the caller with no parallel region at all, not even an inactive one
// (`#pragma omp parallel if (false)`): a kernel that splits its own work inside such a
// region starts a nested team, and libgomp creates (and ends) that team's threads on
// every call (measured: a thread created per convolution per run), while the pool's
// idle thread spins on a core the new one needs.
template <class Fn>
void for_each_on_team(int team, int64_t count, Fn&& fn) {
  if (team <= 1) {
    for (int64_t i = 0; i < count; ++i) fn(i);
    return;
  }
#pragma omp parallel for num_threads(team) schedule(static)
  for (int64_t i = 0; i < count; ++i) fn(i);
}

}  // namespace minfer::kernels
