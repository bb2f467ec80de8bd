// engine_check: runs ONNX backend-test cases (model + test_data_set_N) through the
// engine and prints PASS, FAIL or SKIP per case, then the totals; exits 1 if any failed.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <regex>

#include "bench/cli_common.h"
#include "bench/conformance.h"
#include "graph/errors.h"

int main(int argc, char** argv) {
  CLI::App app{"Check the engine against test cases in the ONNX backend-test layout."};
  std::vector<std::string> dirs;
  std::string known_failures_path, filter;
  minfer::cli::CheckOptions check;
  minfer::CompileOptions options;
  app.add_option("dirs", dirs, "Test case directories, or directories of them")->required();
  app.add_option("--rtol", check.tolerance.rtol, "Relative tolerance")->check(CLI::NonNegativeNumber);
  app.add_option("--atol", check.tolerance.atol, "Absolute tolerance")->check(CLI::NonNegativeNumber);
  app.add_flag("--constant_inputs", check.constant_inputs,
               "Fix every input at load time, so foldable graphs run in the constant folder (tests it)");
  app.add_option("--known_failures", known_failures_path,
                 "File of 'case: reason' lines: those cases may fail (XFAIL) and must not pass (XPASS fails)");
  app.add_option("--filter", filter, "Run only the cases whose name matches this regular expression");
  minfer::cli::add_compile_flags(app, options);
  if (auto status = minfer::cli::parse_command_line(app, "engine_check", argc, argv)) return *status;

  return minfer::cli::run_tool("engine_check", [&] {
    using minfer::cli::CaseStatus;
    std::map<std::string, std::string> known;
    if (!known_failures_path.empty()) known = minfer::cli::read_known_failures(known_failures_path);
    std::regex pattern;
    try {
      pattern = std::regex(filter.empty() ? ".*" : filter);
    } catch (const std::regex_error& e) {
      throw minfer::UsageError(fmt::format("--filter '{}': {}", filter, e.what()));
    }
    int found = 0, passed = 0, failed = 0, skipped = 0, known_failed = 0;
    for (const std::string& dir : dirs) {
      for (const auto& path : minfer::cli::find_test_cases(dir)) {
        ++found;
        const std::string name = minfer::cli::case_name(path);
        if (!std::regex_search(name, pattern)) continue;
        const minfer::cli::CaseResult r = minfer::cli::run_test_case(path, options, check);
        const auto listed = known.find(name);
        if (r.status == CaseStatus::kSkip) {
          ++skipped;
          std::cout << "SKIP " << name << ": " << r.message << "\n";
        } else if (listed != known.end() && r.status == CaseStatus::kFail) {
          ++known_failed;
          std::cout << "XFAIL " << name << ": " << r.message << " (known: " << listed->second << ")\n";
        } else if (listed != known.end()) {
          ++failed;
          std::cout << "XPASS " << name << ": passes but is listed as a known failure; remove it from "
                    << known_failures_path << "\n";
        } else if (r.status == CaseStatus::kFail) {
          ++failed;
          std::cout << "FAIL " << name << ": " << r.message << "\n";
        } else {
          ++passed;
          std::cout << "PASS " << name << "\n";
        }
      }
    }
    // A run that checked nothing must not look like a success.
    if (passed + failed + skipped + known_failed == 0)
      throw minfer::UsageError(found == 0
                                   ? fmt::format("no test case in {}", fmt::join(dirs, ", "))
                                   : fmt::format("none of the {} test cases matches --filter '{}'", found, filter));
    std::cout << fmt::format("{} passed, {} failed, {} skipped", passed, failed, skipped);
    if (!known_failures_path.empty()) std::cout << fmt::format(", {} known failures", known_failed);
    std::cout << "\n" << std::flush;
    // A report that never reached stdout (a full disk, /dev/full) is an error, not a pass.
    if (!std::cout) throw minfer::UsageError(fmt::format("stdout: cannot write ({})", std::strerror(errno)));
    return failed == 0 ? 0 : 1;
  });
}
