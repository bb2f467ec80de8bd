// Pieces the command-line tools share: the run-wide compile flags, deterministic
// inputs and the one way they report an error and exit.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/session.h"

namespace CLI {
class App;
}

namespace minfer::cli {

// The run-wide flags that change how a model compiles or runs (--num_threads,
// --max_memory, --check_numerics, and the choices of bench/attribute_choices.h such as
// --deconv_method that become CompileOptions attribute overrides).
// Every tool that compiles a model registers them here, so a flag added once reaches
// engine_bench and engine_check alike.
void add_compile_flags(CLI::App& app, CompileOptions& options);

// Parses the command line. A bad flag is one line on stderr, "<tool>: <cause> (--help
// lists the flags)", and exit status 2. Returns the status main returns (0 after
// --help), or nullopt when the tool goes on.
std::optional<int> parse_command_line(CLI::App& app, const char* tool, int argc, char** argv);
// The same for arguments already taken apart (in command-line order, without the program).
std::optional<int> parse_command_line(CLI::App& app, const char* tool, std::vector<std::string> args);

// Fills every float32 graph input with reproducible pseudo-random values in [0, 1), and
// every int64 one (token ids, indices) with zeros and every bool one with false: values
// any vocabulary or axis takes, where random integers could index past its end.
void fill_inputs_deterministic(Session& session, uint64_t seed = 1);

// "0.485,0.456,0.406" -> {0.485, 0.456, 0.406}; throws UsageError naming the flag.
std::vector<float> parse_float_list(const std::string& flag, const std::string& text, bool positive = false);

// Runs `body`, turning any exception into "<tool>: <message>" on stderr and exit code 1;
// first refuses a MINFER_ISA the kernels cannot run (profiler/isa.h) the same way.
int run_tool(const char* tool, const std::function<int()>& body);

}  // namespace minfer::cli
