// Measured times of every step of every profiled run. Recording is two clock reads
// and two stores per op, cheap enough to leave on by default.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

namespace minfer {

using Clock = std::chrono::steady_clock;

inline double elapsed_ms(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

// One profiled run on the profile's time line.
struct RunTimes {
  Clock::time_point start;
  std::vector<double> step_start_ms;  // each step's start, from the run's start
  std::vector<double> step_ms;        // each step's duration
};

class RunProfile {
 public:
  // A record for a new run, sized before its start time is taken, so that recording a
  // step allocates nothing and the allocation is not timed.
  RunTimes& begin_run(size_t steps) {
    runs_.push_back({{}, std::vector<double>(steps, 0.0), std::vector<double>(steps, 0.0)});
    runs_.back().start = Clock::now();
    return runs_.back();
  }
  void end_run(double total_ms) { total_ms_.push_back(total_ms); }
  void clear() {
    runs_.clear();
    total_ms_.clear();
  }

  size_t runs() const { return total_ms_.size(); }
  const std::vector<double>& total_ms() const { return total_ms_; }
  // Every run's time line, for traces.
  const std::vector<RunTimes>& timeline() const { return runs_; }
  // Times of one step across all runs.
  std::vector<double> step_samples(size_t step) const;

 private:
  std::vector<RunTimes> runs_;
  std::vector<double> total_ms_;
};

}  // namespace minfer
