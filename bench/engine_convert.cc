// engine_convert: converts a model between ONNX and net.json (in either direction, or
// .onnx to .onnx with shape subgraphs folded). net.json goes with a weights file beside
// it, named after it (<stem>.bin).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>

#include "bench/cli_common.h"
#include "engine/compiled_model.h"
#include "graph/errors.h"
#include "graph/model_loader.h"
#include "graph/netjson_writer.h"
#include "graph/onnx_writer.h"
#include "graph/output_files.h"

int main(int argc, char** argv) {
  CLI::App app{"Convert a model: model.onnx <-> net.json (+ its .bin weights file)."};
  std::string in_path, out_path, input_shape, max_memory;
  app.add_option("input", in_path, "Model to read (.onnx or .json)")->required();
  app.add_option("output", out_path, "Model to write (.json: net.json and <stem>.bin beside it; .onnx)")->required();
  app.add_option("--input_shape", input_shape, "Fix input shapes first: name:1,3,224,224[;name2:...]");
  app.add_option("--max_memory", max_memory, "Most bytes of constant data the model may take (K, M, G, T suffixes)");
  if (auto status = minfer::cli::parse_command_line(app, "engine_convert", argc, argv)) return *status;

  return minfer::cli::run_tool("engine_convert", [&] {
    namespace fs = std::filesystem;
    const std::string ext = fs::path(out_path).extension().string();
    if (ext != ".json" && ext != ".onnx")
      throw minfer::UsageError(fmt::format("{}: unknown output format '{}' (expected .json or .onnx)", out_path, ext));
    const fs::path weights = fs::path(out_path).replace_extension(".bin");
    std::vector<minfer::OutputPath> targets = {{"output", out_path}};
    if (ext == ".json") targets.push_back({"weights file", weights.string()});
    minfer::check_distinct_outputs(targets, {{"input", in_path}});  // before reading it
    minfer::LoadOptions load;
    if (!max_memory.empty()) load.max_memory = minfer::parse_byte_size("--max_memory", max_memory);
    if (!input_shape.empty()) load.input_shapes = minfer::parse_input_shapes(input_shape);
    // Shape subgraphs folded and older opsets upgraded: what the engine would run.
    minfer::Graph loaded = minfer::load_model(in_path, load);
    std::vector<minfer::OutputPath> read;
    for (const std::string& file : loaded.data_files) read.push_back({"data file of the input", file});
    minfer::check_distinct_outputs(targets, read);
    const minfer::FoldedGraph folded = minfer::fold_graph(std::move(loaded), load.max_memory);
    const minfer::Graph& graph = folded.graph;
    if (ext == ".onnx") {
      minfer::write_files({{out_path, minfer::to_onnx(graph, folded.output_types)}});
      return 0;
    }
    const minfer::NetJsonFiles files = minfer::to_netjson(graph, weights.filename().string());
    std::vector<std::pair<std::string, std::string>> outputs = {{out_path, files.json}};
    if (!files.weights.empty()) outputs.emplace_back(weights.string(), files.weights);
    minfer::write_files(outputs);
    return 0;
  });
}
