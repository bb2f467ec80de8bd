// A model the engine cannot run is refused with every problem named at once: one line
// per distinct problem (op type and cause, its first node, how many nodes have it),
// then a count, in the library's message and on the tools' stderr alike.
#include <gtest/gtest.h>

#include <sstream>

#include "engine/engine.h"
#include "tests/cli_test_util.h"

namespace minfer::test {
namespace {

const std::string kModel = std::string(MINFER_SOURCE_DIR) + "/tests/data/bad_models/several_unsupported.json";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Two unknown op types (one in two nodes, the second after a node that reads the
// first's output) and an unsupported attribute on a node downstream of the second.
const std::vector<std::string> kExpected = {
    kModel + ": node 'frob' (Frobnicate): op type 'Frobnicate' is not supported (and 1 more Frobnicate nodes)",
    kModel + ": node 'twiddle' (Twiddle): op type 'Twiddle' is not supported",
    kModel + ": node 'leaky' (LeakyRelu): unsupported attribute 'beta'",
    kModel + ": 3 unsupported ops or attributes in 4 nodes",
};

TEST(UnsupportedReport, LibraryNamesEveryProblemOnItsOwnLine) {
  try {
    compile(load_model(kModel));
    FAIL() << "compiled";
  } catch (const UnsupportedModelError& e) {
    EXPECT_EQ(lines_of(e.what()), kExpected);
  }
}

TEST(UnsupportedReport, ToolPrintsOneStderrLinePerProblem) {
  const CommandResult r = run_command(std::string(MINFER_ENGINE_BENCH) + " --model " + kModel + " --num_runs 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  std::vector<std::string> want;
  for (const std::string& line : kExpected) want.push_back("engine_bench: " + line);
  EXPECT_EQ(lines_of(r.err), want);
}

}  // namespace
}  // namespace minfer::test
