// A buffer with its place in an arena and its lifetime in steps: what the memory planner
// places, what the report draws, and what an LSTM cell shows of its own workspace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace minfer {

struct BufferSpan {
  std::string name;                  // the first tensor it holds, or what it is for
  std::vector<std::string> tensors;  // everything sharing it (ops running in place)
  int64_t offset = 0, bytes = 0;
  int first_step = 0, last_step = 0;  // first step that writes or reads it, last that reads it
};

}  // namespace minfer
