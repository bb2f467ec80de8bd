#include "profiler/run_profile.h"

namespace minfer {

std::vector<double> RunProfile::step_samples(size_t step) const {
  std::vector<double> s;
  s.reserve(runs_.size());
  for (const RunTimes& run : runs_) s.push_back(run.step_ms[step]);
  return s;
}

}  // namespace minfer
