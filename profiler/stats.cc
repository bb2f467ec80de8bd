#include "profiler/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace minfer {

TimingStats summarize(const std::vector<double>& samples) {
  TimingStats s;
  if (samples.empty()) return s;
  s.count = static_cast<int64_t>(samples.size());
  s.first = samples.front();
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.count);
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  const size_t mid = sorted.size() / 2;
  s.median = sorted.size() % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
  double var = 0;
  for (double x : samples) var += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(var / static_cast<double>(s.count));
  return s;
}

}  // namespace minfer
