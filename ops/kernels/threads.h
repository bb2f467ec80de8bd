// How many OpenMP threads a kernel starts: never more than asked for or than it has
// independent pieces of work, and none that would get too little work to pay for waking.
#pragma once

#include <algorithm>
#include <cstdint>

namespace minfer::kernels {

// Below this many multiply-adds per thread, starting a thread costs more than it saves.
inline constexpr int64_t kMinMacsPerThread = int64_t{1} << 15;

inline int threads_worth_starting(int64_t macs, int64_t work_items, int threads) {
  const int64_t useful = std::min<int64_t>(work_items, std::max<int64_t>(1, macs / kMinMacsPerThread));
  return static_cast<int>(std::clamp<int64_t>(useful, 1, std::max(threads, 1)));
}

}  // namespace minfer::kernels
