// Runs the engine_bench binary as a user would, capturing its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace minfer::test {

inline const std::string kEngineBench = MINFER_ENGINE_BENCH;
inline const std::string kSourceDir = MINFER_SOURCE_DIR;

struct CommandResult {
  int exit_code;
  std::string out, err;
};

inline CommandResult run_engine_bench(const std::string& args) {
  const std::string err_file =
      std::filesystem::temp_directory_path() / ("engine_bench_err_" + std::to_string(getpid()));
  const std::string cmd = kEngineBench + " " + args + " 2>" + err_file;
  CommandResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  std::filesystem::remove(err_file);
  return r;
}

}  // namespace minfer::test
