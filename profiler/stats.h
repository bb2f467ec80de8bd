// Summary statistics of repeated timings, as benchmark_model reports them.
#pragma once

#include <cstdint>
#include <vector>

namespace minfer {

struct TimingStats {
  int64_t count = 0;
  double first = 0, mean = 0, min = 0, median = 0, max = 0, std = 0;  // std: population
};

TimingStats summarize(const std::vector<double>& samples);

}  // namespace minfer
