// Places buffers with known lifetimes in one arena, as TensorFlow Lite Micro's
// greedy-by-size planner does: largest first, each at the lowest offset where it
// overlaps no already-placed buffer that is alive at the same time.
#pragma once

#include <cstdint>
#include <vector>

namespace minfer {

struct BufferRequest {
  int64_t bytes = 0;
  int first_step = 0;  // first step that writes or reads it
  int last_step = 0;   // last step that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // one per request, in request order
  int64_t arena_bytes = 0;
};

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, int64_t alignment = 64);

// The largest sum of (aligned) sizes of buffers alive at one step.
int64_t live_bytes_lower_bound(const std::vector<BufferRequest>& requests, int64_t alignment = 64);

}  // namespace minfer
