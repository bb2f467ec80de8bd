// Runs a command-line tool as a user would, capturing its exit code, stdout and stderr.
#pragma once

#include <string>

namespace minfer::test {

struct CommandResult {
  int exit_code;
  std::string out, err;
};

// `command` is passed to the shell; stderr is captured separately from stdout.
CommandResult run_command(const std::string& command);

}  // namespace minfer::test
