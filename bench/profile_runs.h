// engine_bench's measurement, which minfer.Model.profile() runs too, so the two cannot
// drift: reproducible inputs (or an image), warmup runs, profiled runs, and the report
// joining the measured times with the analytic costs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/session.h"
#include "profiler/machine_model.h"

namespace minfer::cli {

struct ProfileSettings {
  int warmup_runs = 2, num_runs = 20;
  MachineOptions machine;  // the thread count is the model's
  // --image, --mean and --std as given: empty means no image, and the model's preprocess.
  std::string image, mean, std;
  int top_k = 5;  // classes in the report's "classification" (with an image)
};

// Throws UsageError unless num_runs >= 1 and warmup_runs >= 0.
void check_run_counts(int warmup_runs, int num_runs);

// Fills the session's inputs (fill_inputs_deterministic, then the image), runs it and
// returns the report, with "classification" when there is an image. The session keeps
// the profiled runs' times (for format_trace). Throws UsageError for settings out of range.
nlohmann::json profile_runs(Session& session, const ProfileSettings& settings);

}  // namespace minfer::cli
