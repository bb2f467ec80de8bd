#include "tests/cli_test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/temp_files.h"

namespace minfer::test {

CommandResult run_command(const std::string& command) {
  static int counter = 0;
  const std::string err_file = test::temp_dir("stderr") + "/" + std::to_string(counter++);
  const std::string cmd = command + " 2>" + err_file;
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
