#include "bench/profile_runs.h"

#include <fmt/format.h>

#include "bench/cli_common.h"
#include "engine/image_input.h"
#include "engine/profile_report.h"
#include "graph/errors.h"
#include "profiler/progress.h"

namespace minfer::cli {

void check_run_counts(int warmup_runs, int num_runs) {
  if (num_runs < 1) throw UsageError(fmt::format("num_runs must be at least 1, got {}", num_runs));
  if (warmup_runs < 0) throw UsageError(fmt::format("warmup_runs must not be negative, got {}", warmup_runs));
}

nlohmann::json profile_runs(Session& session, const ProfileSettings& settings) {
  check_run_counts(settings.warmup_runs, settings.num_runs);
  if (settings.top_k < 1) throw UsageError(fmt::format("top_k must be at least 1, got {}", settings.top_k));
  Preprocess preprocess = session.model().graph().preprocess;
  if (!settings.mean.empty()) preprocess.mean = parse_float_list("--mean", settings.mean);
  if (!settings.std.empty()) preprocess.std = parse_float_list("--std", settings.std, /*positive=*/true);
  fill_inputs_deterministic(session);
  if (!settings.image.empty()) set_image_input(session, settings.image, preprocess);

  MachineOptions machine = settings.machine;
  machine.threads = session.model().options().num_threads;
  machine.progress = Progress::enabled();
  const MachineModel machine_figures = machine_model(machine);

  std::vector<double> unprofiled_ms;
  {
    Progress progress("running", settings.warmup_runs + settings.num_runs);
    session.clear_profile();
    session.set_profiling(false);
    for (int i = 1; i <= settings.warmup_runs; ++i) {
      session.run();
      progress.update(i);
    }
    // Each profiled run is followed by one without per-op timing, so both see the same
    // machine state and the difference of their latencies is what the timing costs.
    for (int i = 1; i <= settings.num_runs; ++i) {
      session.set_profiling(true);
      session.run();
      session.set_profiling(false);
      const Clock::time_point start = Clock::now();
      session.run();
      unprofiled_ms.push_back(elapsed_ms(start, Clock::now()));
      progress.update(settings.warmup_runs + i);
    }
    session.set_profiling(true);
  }

  nlohmann::json report = profile_report(session, settings.warmup_runs, machine_figures, unprofiled_ms);
  if (!settings.image.empty())
    report["classification"] = classification_report(session, settings.image, settings.top_k);
  return report;
}

}  // namespace minfer::cli
