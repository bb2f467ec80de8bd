#include "bench/compare.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <memory>

#include "bench/cli_common.h"
#include "bench/profile_runs.h"
#include "engine/profile_report.h"
#include "graph/errors.h"
#include "graph/model_loader.h"
#include "profiler/compare_report.h"
#include "profiler/progress.h"

namespace minfer::cli {

const char* const kInterleavedSchedule = "interleaved A B, B A, A B, ... so that machine noise falls on both alike";

CompareArgs take_compare_sides(const std::vector<std::string>& args) {
  CompareArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--compare") {
      out.rest.push_back(args[i]);
      continue;
    }
    if (!out.sides.empty()) throw UsageError("--compare given twice: it takes two sides, A and B, once");
    if (args.size() - i - 1 < 2)
      throw UsageError("--compare needs two sides, A and B (each a model and/or quoted flags)");
    out.sides = {args[i + 1], args[i + 2]};
    i += 2;
    // engine_bench takes no positional arguments: a word after the sides is a third side.
    if (i + 1 < args.size() && !args[i + 1].starts_with("-"))
      throw UsageError(fmt::format("--compare takes two sides, A and B; '{}' would be a third", args[i + 1]));
  }
  return out;
}

SideSettings parse_side(const std::string& label, const std::string& spec, const SideSettings& defaults) {
  SideSettings side = defaults;
  std::string positional, flagged, input_shape;
  CLI::App app{"One side of --compare"};
  app.set_help_flag();
  app.add_option("model", positional);
  app.add_option("--model", flagged);
  app.add_option("--input_shape", input_shape);
  add_compile_flags(app, side.options);
  const std::string where = fmt::format("--compare {} '{}'", label, spec);
  try {
    app.parse(spec, false);
  } catch (const CLI::ParseError& e) {
    std::string cause = e.what();
    std::replace(cause.begin(), cause.end(), '\n', ' ');
    throw UsageError(
        fmt::format("{}: {} (a side takes a model, --model, --input_shape and the compile flags)", where, cause));
  }
  if (!positional.empty() && !flagged.empty())
    throw UsageError(fmt::format("{}: names two models, '{}' and '{}'", where, positional, flagged));
  if (!positional.empty() || !flagged.empty()) side.model_path = positional.empty() ? flagged : positional;
  if (side.model_path.empty())
    throw UsageError(fmt::format("{}: no model (name one in the side, or give --model)", where));
  if (!input_shape.empty()) {
    try {
      side.input_shapes = parse_input_shapes(input_shape);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", where, e.what()));
    }
  }
  return side;
}

ComparedModel load_side(const std::string& label, const std::string& spec, const SideSettings& defaults) {
  const SideSettings side = parse_side(label, spec, defaults);
  try {
    return {spec, compile_file(side.model_path, side.options, side.input_shapes)};
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--compare {}: {}", label, e.what()));
  }
}

void run_interleaved(const std::vector<Session*>& sessions, int warmup_runs, int num_runs,
                     const std::function<void(int)>& progress) {
  int done = 0;
  auto turn = [&](int t) {
    for (size_t k = 0; k < sessions.size(); ++k) {
      sessions[t % 2 == 0 ? k : sessions.size() - 1 - k]->run();
      if (progress) progress(++done);
    }
  };
  for (Session* s : sessions) s->set_profiling(false);
  for (int t = 0; t < warmup_runs; ++t) turn(t);
  for (Session* s : sessions) s->set_profiling(true);
  for (int t = 0; t < num_runs; ++t) turn(t);
}

nlohmann::json compare_models(const ComparedModel& a, const ComparedModel& b, const CompareRun& run) {
  check_run_counts(run.warmup_runs, run.num_runs);
  const ComparedModel* sides[] = {&a, &b};
  std::vector<std::unique_ptr<Session>> sessions;
  std::map<int, MachineModel> machines;  // by thread count, each measured (or read) once
  for (const ComparedModel* side : sides) {
    sessions.push_back(std::make_unique<Session>(side->model));
    fill_inputs_deterministic(*sessions.back());
    MachineOptions m = run.machine;
    m.threads = side->model->options().num_threads;
    if (!machines.count(m.threads)) machines.emplace(m.threads, machine_model(m));
  }

  {
    Progress progress("running A and B", 2 * static_cast<int64_t>(run.warmup_runs + run.num_runs));
    run_interleaved({sessions[0].get(), sessions[1].get()}, run.warmup_runs, run.num_runs,
                    [&](int done) { progress.update(done); });
  }
  const std::string labels[] = {"A", "B"};
  std::vector<CompareSide> reports;
  for (int i = 0; i < 2; ++i)
    reports.push_back(
        {labels[i], sides[i]->spec,
         profile_report(*sessions[i], run.warmup_runs, machines.at(sides[i]->model->options().num_threads))});
  return build_compare_report(reports[0], reports[1], kInterleavedSchedule);
}

}  // namespace minfer::cli
