// Chrome/Perfetto trace-event JSON (opens in ui.perfetto.dev and chrome://tracing):
// one complete ("X") event per op per profiled run, placed where it ran on the time
// line, with the op's analytic cost from the report in its args.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "profiler/run_profile.h"

namespace minfer {

// `report` is build_report's document for the runs in `profile` (same ops, same runs);
// throws std::invalid_argument when they do not match.
std::string format_trace(const nlohmann::json& report, const RunProfile& profile);

}  // namespace minfer
