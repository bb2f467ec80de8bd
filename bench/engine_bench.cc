// engine_bench: load a model, run it, print the profile (cost joined with time), in
// the manner of TensorFlow's benchmark_model.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <optional>

#include "bench/cli_common.h"
#include "bench/compare.h"
#include "bench/profile_runs.h"
#include "engine/engine.h"
#include "graph/output_files.h"
#include "profiler/compare_report.h"
#include "profiler/progress.h"

int main(int argc, char** argv) {
  CLI::App app{"Run a model and report each op's analytic cost next to its measured time."};
  std::string model_path, input_shape, format = "text", output_path;
  minfer::cli::ProfileSettings profile;
  bool memory_plan = false;
  minfer::CompileOptions options;
  app.add_option("--model", model_path, "Model file (.json: net.json, .onnx: ONNX)");
  app.add_option("--num_runs", profile.num_runs, "Profiled runs")->check(CLI::Range(1, 1000000));
  app.add_option("--warmup_runs", profile.warmup_runs, "Unprofiled runs first")->check(CLI::Range(0, 1000000));
  minfer::cli::add_compile_flags(app, options);
  app.add_option("--input_shape", input_shape, "Override input shapes: name:1,3,224,224[;name2:...]");
  app.add_flag("--memory_plan", memory_plan, "Also print the memory plan: buffers, offsets, lifetimes");
  minfer::TextOptions text_options;
  app.add_flag("--explain", text_options.explain, "Text report: each op's MACs and FLOPs formulas with its numbers");
  app.add_flag("--verbose", text_options.verbose, "Text report: every action of every graph pass");
  app.add_option("--format", format, "Report format")->check(CLI::IsMember({"text", "json", "csv"}));
  app.add_option("--output", output_path, "Write the report to FILE instead of stdout");

  std::string trace_path, html_path;
  app.add_option("--image", profile.image, "Image (PNG, JPEG, BMP) for the first input; prints the top classes");
  app.add_option("--mean", profile.mean,
                 "Per-channel mean after scaling pixels to [0,1], e.g. 0.485,0.456,0.406 "
                 "(default: the model's \"preprocess\", else 0)");
  app.add_option("--std", profile.std, "Per-channel std, e.g. 0.229,0.224,0.225 (default: the model's, else 1)");
  app.add_option("--top_k", profile.top_k, "Classes shown with --image")->check(CLI::Range(1, 1000000));
  app.add_option("--trace", trace_path, "Write a Chrome/Perfetto trace (JSON) of every profiled run to FILE");
  app.add_option("--html", html_path, "Write the report as one self-contained HTML page to FILE");

  app.footer(
      "--compare A B: two sides in one run, side by side; each side a model and/or quoted flags over the run-wide "
      "ones, e.g. --compare a.json b.json, or --model m.json --compare \"--fold_bn 0\" \"--fold_bn 1\"");

  minfer::MachineOptions& machine = profile.machine;
  machine.cache_file = minfer::default_machine_cache_file();
  app.add_option("--peak_gflops", machine.peak_gflops, "Peak fp32 GFLOP/s for the roofline (default: measured)")
      ->check(CLI::PositiveNumber);
  app.add_option("--bandwidth_gbs", machine.bandwidth_gbs, "Memory GB/s for the roofline (default: measured)")
      ->check(CLI::PositiveNumber);
  app.add_option("--fma_units", machine.fma_units,
                 "FMA units per core in the theoretical peak (default: 1 on AMD Zen 4 at 512 bits, else 2)")
      ->check(CLI::Range(1, 16));
  app.add_flag("--probe", machine.reprobe, "Measure the machine again instead of using the cached figures");
  app.add_option("--machine_cache", machine.cache_file, "File of measured machine figures")
      ->default_str(machine.cache_file);
  minfer::cli::CompareArgs args;
  if (int failed = minfer::cli::run_tool("engine_bench", [&] {
        args = minfer::cli::take_compare_sides({argv + 1, argv + argc});
        return 0;
      }))
    return failed;
  if (auto status = minfer::cli::parse_command_line(app, "engine_bench", args.rest)) return *status;

  // The output files (path, contents) are written together by emit(), so a failure
  // leaves none of them and nothing on stdout.
  std::vector<std::pair<std::string, std::string>> files;
  auto emit = [&](const std::string& text) {
    if (!output_path.empty()) files.emplace_back(output_path, text);
    minfer::write_files(files);
    if (output_path.empty()) minfer::write_stdout(text);
  };
  return minfer::cli::run_tool("engine_bench", [&] {
    std::vector<minfer::OutputPath> outputs;
    for (const auto& [flag, path] :
         {std::pair{"--output", &output_path}, {"--trace", &trace_path}, {"--html", &html_path}})
      if (!path->empty()) outputs.push_back({flag, *path});
    std::vector<minfer::OutputPath> inputs;
    if (!model_path.empty()) inputs.push_back({"--model", model_path});
    if (!profile.image.empty()) inputs.push_back({"--image", profile.image});
    minfer::check_distinct_outputs(outputs, inputs);  // before loading, not after the run
    // Once a model is loaded, the files it read too (weights, external data, labels),
    // still before any run.
    auto check_against_model_files = [&](const minfer::CompiledModel& model, const std::string& of) {
      inputs.push_back({"model" + of, model.graph().source});
      for (const std::string& file : model.graph().data_files) inputs.push_back({"data file" + of, file});
      minfer::check_distinct_outputs(outputs, inputs);
    };
    std::map<std::string, minfer::Shape> input_shapes;
    if (!input_shape.empty()) input_shapes = minfer::parse_input_shapes(input_shape);
    if (!args.sides.empty()) {
      if (!profile.image.empty() || !trace_path.empty())
        throw minfer::UsageError("--compare runs two sides: --image and --trace are for one model");
      machine.progress = minfer::Progress::enabled();
      const minfer::cli::SideSettings defaults{model_path, input_shapes, options};
      const minfer::cli::ComparedModel a = minfer::cli::load_side("A", args.sides[0], defaults);
      const minfer::cli::ComparedModel b = minfer::cli::load_side("B", args.sides[1], defaults);
      check_against_model_files(*a.model, " of side A");
      check_against_model_files(*b.model, " of side B");
      const nlohmann::json comparison =
          minfer::cli::compare_models(a, b, {profile.warmup_runs, profile.num_runs, machine});
      std::string text;
      if (format == "json")
        text = comparison.dump(2) + "\n";
      else if (format == "csv")
        text = minfer::format_compare_csv(comparison);
      else
        text = minfer::format_compare_text(comparison);
      if (memory_plan)
        for (const nlohmann::json& side : comparison["sides"])
          text += "\nSide " + side["label"].get<std::string>() + ":\n" + minfer::format_memory_plan(side["report"]);
      if (!html_path.empty()) files.emplace_back(html_path, minfer::format_compare_html(comparison));
      emit(text);
      return 0;
    }
    if (model_path.empty()) throw minfer::UsageError("--model is required (or --compare A B)");
    minfer::Session session(minfer::compile_file(model_path, options, input_shapes));
    check_against_model_files(session.model(), " of the model");
    const nlohmann::json report = minfer::cli::profile_runs(session, profile);
    std::string text;
    if (format == "json")
      text = report.dump(2) + "\n";
    else if (format == "csv")
      text = minfer::format_csv(report);
    else
      text = minfer::format_text(report, text_options);
    if (memory_plan) text += "\n" + minfer::format_memory_plan(report);
    if (!trace_path.empty()) files.emplace_back(trace_path, minfer::format_trace(report, session.profile()));
    if (!html_path.empty()) files.emplace_back(html_path, minfer::format_html(report));
    emit(text);
    return 0;
  });
}
