// engine_bench --compare A B: two models, or one model under two settings, run in one
// process with their runs interleaved, reported side by side (profiler/compare_report.h).
//
// Each side is one argument: a model path and/or flags, e.g.
//   --compare models/a.json models/b.json
//   --model models/m.json --compare "--fold_bn 0" "--fold_bn 1"
//   --compare "models/a.json --num_threads 2" "models/b.json --input_shape x:1,3,96,96"
// A side starts from the run-wide --model, --input_shape and compile flags and overrides
// what it names.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/session.h"
#include "profiler/machine_model.h"

namespace minfer::cli {

// What one side runs and how.
struct SideSettings {
  std::string model_path;
  std::map<std::string, Shape> input_shapes;
  CompileOptions options;
};

// The command line split into `--compare A B` and everything else. The sides are taken
// before CLI11 parses the rest, which would read a side such as "--fold_bn 0" as an
// unknown option. Throws UsageError when fewer than two arguments follow --compare, a
// third side follows them, or --compare comes twice.
struct CompareArgs {
  std::vector<std::string> sides, rest;
};
CompareArgs take_compare_sides(const std::vector<std::string>& args);

// The side `spec` ("[MODEL] [--model MODEL] [--input_shape S] [compile flags]") applied
// on top of the run-wide `defaults`; throws UsageError naming the side.
SideSettings parse_side(const std::string& label, const std::string& spec, const SideSettings& defaults);

// A compiled side and how the user gave it.
struct ComparedModel {
  std::string spec;
  std::shared_ptr<const CompiledModel> model;
};

// parse_side, then load and compile; a side that fails to load is a UsageError naming it.
ComparedModel load_side(const std::string& label, const std::string& spec, const SideSettings& defaults);

// Warmup runs, then profiled runs, of every session in turns, each turn in the
// opposite order to the one before (A B, B A, A B, ...): whatever the machine does
// meanwhile, and whichever side runs with the other's data still in cache, falls on
// both alike. `progress` gets the number of runs done.
void run_interleaved(const std::vector<Session*>& sessions, int warmup_runs, int num_runs,
                     const std::function<void(int)>& progress = {});

// The order run_interleaved keeps, in words, for the report.
extern const char* const kInterleavedSchedule;

struct CompareRun {
  int warmup_runs = 0, num_runs = 1;
  MachineOptions machine;  // threads come from each side
};

// Runs sides A and B (each on inputs from fill_inputs_deterministic) interleaved and
// returns the comparison document (build_compare_report).
nlohmann::json compare_models(const ComparedModel& a, const ComparedModel& b, const CompareRun& run);

}  // namespace minfer::cli
