// Gathers what a Session measured and what its model costs into the profiler's report.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "engine/session.h"
#include "profiler/machine_model.h"

namespace minfer {

// With a machine model the report also places every op on the roofline. unprofiled_ms:
// the times of runs made without per-op timing (Session::set_profiling(false)).
nlohmann::json profile_report(const Session& session, int warmup_runs,
                              const std::optional<MachineModel>& machine = std::nullopt,
                              const std::vector<double>& unprofiled_ms = {});

}  // namespace minfer
