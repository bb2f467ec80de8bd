#include "profiler/run_profile.h"

namespace minfer {

std::vector<double> RunProfile::step_samples(size_t step) const {
  std::vector<double> s;
  s.reserve(step_ms_.size());
  for (const auto& row : step_ms_) s.push_back(row[step]);
  return s;
}

}  // namespace minfer
