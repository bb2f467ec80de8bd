// Gathers what a Session measured and what its model costs into the profiler's report.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/session.h"

namespace minfer {

nlohmann::json profile_report(const Session& session, int warmup_runs);

}  // namespace minfer
