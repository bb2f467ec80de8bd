// engine_bench: load a model, run it, print the profile (cost joined with time), in
// the manner of TensorFlow's benchmark_model.
#include <iostream>

#include <CLI/CLI.hpp>

#include "bench/cli_common.h"
#include "engine/engine.h"

int main(int argc, char** argv) {
  CLI::App app{"Run a model and report each op's analytic cost next to its measured time."};
  std::string model_path, input_shape, format = "text", output_path;
  int num_runs = 20, warmup_runs = 2;
  bool memory_plan = false;
  minfer::CompileOptions options;
  app.add_option("--model", model_path, "Model file (.json: net.json, .onnx: ONNX)")->required();
  app.add_option("--num_runs", num_runs, "Profiled runs")->check(CLI::Range(1, 1000000));
  app.add_option("--warmup_runs", warmup_runs, "Unprofiled runs first")->check(CLI::Range(0, 1000000));
  minfer::cli::add_compile_flags(app, options);
  app.add_option("--input_shape", input_shape, "Override input shapes: name:1,3,224,224[;name2:...]");
  app.add_flag("--memory_plan", memory_plan, "Also print the memory plan: buffers, offsets, lifetimes");
  app.add_option("--format", format, "Report format")->check(CLI::IsMember({"text", "json", "csv"}));
  app.add_option("--output", output_path, "Write the report to FILE instead of stdout");
  CLI11_PARSE(app, argc, argv);

  return minfer::cli::run_tool("engine_bench", [&] {
    minfer::LoadOptions load;
    if (!input_shape.empty()) load.input_shapes = minfer::parse_input_shapes(input_shape);
    minfer::Session session(minfer::compile(minfer::load_model(model_path, load), options));
    minfer::cli::fill_inputs_deterministic(session);

    session.set_profiling(false);
    for (int i = 0; i < warmup_runs; ++i) session.run();
    session.set_profiling(true);
    for (int i = 0; i < num_runs; ++i) session.run();

    const nlohmann::json report = minfer::profile_report(session, warmup_runs);
    std::string text;
    if (format == "json") text = report.dump(2) + "\n";
    else if (format == "csv") text = minfer::format_csv(report);
    else text = minfer::format_text(report);
    if (memory_plan) text += "\n" + minfer::format_memory_plan(report);
    if (output_path.empty()) std::cout << text;
    else minfer::cli::write_file_atomically(output_path, text);
    return 0;
  });
}
