#include "bench/cli_common.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <sstream>

#include "bench/attribute_choices.h"
#include "graph/errors.h"
#include "graph/memory_limit.h"
#include "profiler/isa.h"

namespace minfer::cli {

namespace {

// A 0|1 flag (CLI11 would otherwise read any number as a bool).
void add_switch(CLI::App& app, const std::string& name, bool& value, const std::string& description) {
  app.add_option_function<int>(
         name, [&value](const int& v) { value = v != 0; }, description + " (0|1, default " + (value ? "1" : "0") + ")")
      ->check(CLI::IsMember({0, 1}));
}

}  // namespace

void add_compile_flags(CLI::App& app, CompileOptions& options) {
  app.add_option("--num_threads", options.num_threads, "Threads inside kernels")->check(CLI::Range(1, 1024));
  app.add_option_function<std::string>(
      "--max_memory",
      [&options](const std::string& v) {
        try {
          options.max_memory = parse_byte_size("--max_memory", v);
        } catch (const UsageError& e) {
          throw CLI::ValidationError(e.what());
        }
      },
      fmt::format("Most bytes of tensor data the model may take: constants plus one run's activations; K, M, G, T "
                  "suffixes (default: half the physical memory, here {})",
                  format_bytes(default_max_memory())));
  app.add_flag("--check_numerics", options.check_numerics,
               "Check every op's outputs for NaN and infinities; the first op that produces one is an error");
  add_switch(app, "--fold_bn", options.passes.fold_bn, "Fold BatchNormalization into Conv/ConvTranspose/Gemm");
  add_switch(app, "--fuse", options.passes.fuse, "Fuse activations into Conv/ConvTranspose/Gemm epilogues");
  add_switch(app, "--clean", options.passes.clean, "Remove Identity/Dropout and dead nodes");
  add_switch(app, "--blocked_layout", options.passes.blocked_layout,
             "Keep tensors between consecutive convolutions in NCHWc, with Reorder ops at the edges");
  for (const AttributeChoice& choice : attribute_choices())
    app.add_option_function<std::string>(
           "--" + choice.name,
           [&options, name = choice.name](const std::string& v) { choose_attribute(options, name, v); },
           choice.description)
        ->check(CLI::IsMember(choice.values));
}

std::optional<int> parse_command_line(CLI::App& app, const char* tool, int argc, char** argv) {
  return parse_command_line(app, tool, std::vector<std::string>(argv + 1, argv + argc));
}

std::optional<int> parse_command_line(CLI::App& app, const char* tool, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector of arguments last first
  try {
    app.parse(args);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::string cause = e.what();
    std::replace(cause.begin(), cause.end(), '\n', ' ');  // CLI11 breaks some messages into lines
    std::cerr << tool << ": " << escape_controls(cause) << " (--help lists the flags)\n";
    return 2;
  }
}

void fill_inputs_deterministic(Session& session, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int v : session.model().input_values()) {
    const ValueSlot& slot = session.model().values()[v];
    const auto n = static_cast<size_t>(num_elements(slot.type.shape));
    if (slot.type.dtype == DType::kInt64) {
      session.set_input(slot.name, std::vector<int64_t>(n, 0));
    } else if (slot.type.dtype == DType::kBool) {
      session.set_input(slot.name, std::vector<uint8_t>(n, 0));
    } else {
      for (float& x : session.input(slot.name)) x = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-53);
    }
  }
}

std::vector<float> parse_float_list(const std::string& flag, const std::string& text, bool positive) {
  std::vector<float> values;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    size_t used = 0;
    float v = 0;
    try {
      v = std::stof(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !std::isfinite(v))
      throw UsageError(fmt::format("{} '{}': '{}' is not a number", flag, text, item));
    if (positive && !(v > 0)) throw UsageError(fmt::format("{} '{}': {} must be positive", flag, text, item));
    values.push_back(v);
    pos = end + 1;
  }
  return values;
}

int run_tool(const char* tool, const std::function<int()>& body) {
  try {
    active_isa();  // a refused MINFER_ISA stops the tool before it reads or writes anything
    return body();
  } catch (const EscapedError& e) {
    // The engine's messages break lines only between problems (a model refused for
    // several): each line is one problem.
    std::istringstream lines(e.what());
    for (std::string line; std::getline(lines, line);) std::cerr << tool << ": " << line << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << tool << ": " << escape_controls(e.what()) << "\n";  // not all exceptions are the engine's
    return 1;
  }
}

}  // namespace minfer::cli
