#include "profiler/trace_writer.h"

#include <fmt/format.h>

#include <stdexcept>

#include "profiler/report.h"

namespace minfer {

using nlohmann::json;

std::string format_trace(const json& report, const RunProfile& profile) {
  const json& ops = report["ops"];
  const std::vector<RunTimes>& runs = profile.timeline();
  if (runs.size() != report["runs"].get<size_t>())
    throw std::invalid_argument(
        fmt::format("trace: the report has {} runs, the profile {}", report["runs"].get<size_t>(), runs.size()));
  constexpr int kPid = 1, kTid = 1;
  json events = json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", kPid},
                    {"tid", kTid},
                    {"args", {{"name", "minfer " + report["model"]["name"].get<std::string>()}}}});
  events.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", kPid},
                    {"tid", kTid},
                    {"args", {{"name", fmt::format("session ({} threads)", report["threads"].get<int>())}}}});
  for (size_t r = 0; r < runs.size(); ++r) {
    const RunTimes& run = runs[r];
    if (run.step_ms.size() != ops.size())
      throw std::invalid_argument(
          fmt::format("trace: run {} has {} steps, the report {} ops", r, run.step_ms.size(), ops.size()));
    const double run_start_us = std::chrono::duration<double, std::micro>(run.start - runs[0].start).count();
    for (size_t i = 0; i < ops.size(); ++i) {
      const json& o = ops[i];
      json args = {{"run", r},
                   {"type", o["type"]},
                   {"kind", o["kind"]},
                   {"output_shape", shape_text(o["output_shape"])},
                   {"macs", o["macs"]},
                   {"flops", o["flops"]},
                   {"params", o["params"]},
                   {"bytes_read", o["bytes_read"]},
                   {"bytes_written", o["bytes_written"]},
                   {"arithmetic_intensity", o["arithmetic_intensity"]}};
      if (o.contains("bound")) args["bound"] = o["bound"];
      events.push_back({{"name", o["name"]},
                        {"cat", op_label(o)},
                        {"ph", "X"},
                        {"ts", run_start_us + run.step_start_ms[i] * 1e3},
                        {"dur", run.step_ms[i] * 1e3},
                        {"pid", kPid},
                        {"tid", kTid},
                        {"args", std::move(args)}});
    }
  }
  return json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump() + "\n";
}

}  // namespace minfer
