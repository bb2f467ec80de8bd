// Runs the engine_bench binary as a user would (exit code, stdout, stderr).
#pragma once

#include <string>

#include "tests/cli_test_util.h"

namespace minfer::test {

inline const std::string kEngineBench = MINFER_ENGINE_BENCH;
inline const std::string kSourceDir = MINFER_SOURCE_DIR;

inline CommandResult run_engine_bench(const std::string& args) {
  return run_command(kEngineBench + " " + args);
}

}  // namespace minfer::test
