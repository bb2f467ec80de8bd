// Measured times of every step of every profiled run. Recording is two clock reads
// and one store per op, cheap enough to leave on by default.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

namespace minfer {

using Clock = std::chrono::steady_clock;

inline double elapsed_ms(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

class RunProfile {
 public:
  // A row of step times for a new run; sized before timing starts so that recording
  // a step allocates nothing.
  std::vector<double>& begin_run(size_t steps) {
    step_ms_.emplace_back(steps, 0.0);
    return step_ms_.back();
  }
  void end_run(double total_ms) { total_ms_.push_back(total_ms); }
  void clear() {
    step_ms_.clear();
    total_ms_.clear();
  }

  size_t runs() const { return total_ms_.size(); }
  const std::vector<double>& total_ms() const { return total_ms_; }
  // Times of one step across all runs.
  std::vector<double> step_samples(size_t step) const;

 private:
  std::vector<std::vector<double>> step_ms_;  // [run][step]
  std::vector<double> total_ms_;
};

}  // namespace minfer
