// Places buffers with known lifetimes in one arena, as TensorFlow Lite Micro's
// greedy-by-size planner does: largest first, each at the lowest offset where it
// overlaps no already-placed buffer that is alive at the same time.
#pragma once

#include <cstdint>
#include <vector>

#include "profiler/buffer_span.h"

namespace minfer {

// Sets every buffer's offset (the planner reads bytes, first_step and last_step) and
// returns the arena's size.
int64_t plan_memory(std::vector<BufferSpan>& buffers, int64_t alignment = 64);

// The largest sum of (aligned) sizes of buffers alive at one step: no plan is smaller.
int64_t live_bytes_lower_bound(const std::vector<BufferSpan>& buffers, int64_t alignment = 64);

}  // namespace minfer
