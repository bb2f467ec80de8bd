// engine_check: the comparison rule, the known-failures file, and the tool on test
// cases written here in the ONNX backend-test layout (PASS, FAIL, SKIP, XFAIL, XPASS).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "bench/conformance.h"
#include "graph/errors.h"
#include "graph/onnx_tensor.h"
#include "tests/cli_test_util.h"
#include "tests/onnx_test_util.h"
#include "tests/temp_files.h"

namespace minfer::test {
namespace {

namespace fs = std::filesystem;
using cli::CaseStatus;

const std::string kCheck = MINFER_ENGINE_CHECK;

TEST(Conformance, FirstMismatchUsesBothTolerances) {
  const cli::Tolerance tol{1e-3, 1e-5};
  const Shape shape{2, 3};
  const std::vector<double> want = {1, 2, 0, -4, 100, 0};
  std::vector<double> got = {1, 2, 0, -4, 100, 0};
  EXPECT_EQ(cli::first_mismatch(got, want, shape, tol), "");
  got[4] = 100.09;  // within 1e-5 + 1e-3 * 100
  got[2] = 9e-6;    // within atol
  EXPECT_EQ(cli::first_mismatch(got, want, shape, tol), "");
  got[4] = 100.2f;  // a float32's value, as kernels compute it
  EXPECT_EQ(cli::first_mismatch(got, want, shape, tol), "index 4 [1,1]: got 100.199997, expected 100");
  got[4] = 100;
  got[2] = 2e-5f;  // 2e-5 > atol, and rtol * 0 adds nothing
  EXPECT_EQ(cli::first_mismatch(got, want, shape, tol), "index 2 [0,2]: got 1.99999995e-05, expected 0");

  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(cli::first_mismatch(std::vector<double>{nan, inf}, {nan, inf}, {2}, tol), "");
  EXPECT_NE(cli::first_mismatch(std::vector<double>{nan}, {1.0}, {1}, tol), "");
  EXPECT_NE(cli::first_mismatch(std::vector<double>{-inf}, {inf}, {1}, tol), "");
  EXPECT_EQ(cli::first_mismatch(std::vector<double>{1}, {1.0, 2.0}, {2}, tol), "has 1 values, expected 2");
}

TEST(Conformance, KnownFailuresFile) {
  const std::string path = temp_dir("known") + "/known.txt";
  write_file(path, "# comment\n\ntest_a: reason one\n  test_b : a reason: with a colon  \n");
  const auto known = cli::read_known_failures(path);
  ASSERT_EQ(known.size(), 2u);
  EXPECT_EQ(known.at("test_a"), "reason one");
  EXPECT_EQ(known.at("test_b"), "a reason: with a colon");
  write_file(path, "test_c\n");
  EXPECT_THROW(cli::read_known_failures(path), UsageError);
}

void write_tensor(const fs::path& path, const std::string& name, const Shape& shape, const std::vector<float>& v) {
  onnx::TensorProto proto;
  tensor_to_proto(name, Tensor{shape, v}, proto);
  write_file(path.string(), proto.SerializeAsString());
}

// A case directory: y = Relu(x) (or `op`), one data set with `expected` as output.
fs::path write_case(const fs::path& root, const std::string& name, const std::vector<float>& expected,
                    const std::string& op = "Relu") {
  OnnxBuilder b;
  b.input("x", {2, 2}).output("y");
  b.node(op, {"x"}, {"y"});
  const fs::path dir = root / name;
  fs::create_directories(dir / "test_data_set_0");
  write_file((dir / "model.onnx").string(), b.bytes());
  write_tensor(dir / "test_data_set_0/input_0.pb", "x", {2, 2}, {-1, 2, -3, 4});
  write_tensor(dir / "test_data_set_0/output_0.pb", "y", {2, 2}, expected);
  return dir;
}

TEST(Conformance, CasesPassFailAndSkip) {
  const fs::path root = temp_dir("cases");
  const CompileOptions options;
  const cli::CheckOptions check;
  const auto pass = cli::run_test_case(write_case(root, "test_pass", {0, 2, 0, 4}), options, check);
  EXPECT_EQ(pass.status, CaseStatus::kPass) << pass.message;
  const auto fail = cli::run_test_case(write_case(root, "test_fail", {0, 2, 0, 5}), options, check);
  EXPECT_EQ(fail.status, CaseStatus::kFail);
  EXPECT_EQ(fail.message, "output 'y' index 3 [1,1]: got 4, expected 5");
  const auto skip = cli::run_test_case(write_case(root, "test_skip", {0, 0, 0, 0}, "Hardmax"), options, check);
  EXPECT_EQ(skip.status, CaseStatus::kSkip);
  EXPECT_EQ(skip.message, "node 'Hardmax_0' (Hardmax): op type 'Hardmax' is not supported");
  fs::create_directories(root / "not_a_case");
  EXPECT_EQ(cli::run_test_case(root / "not_a_case", options, check).status, CaseStatus::kSkip);
  EXPECT_EQ(cli::find_test_cases(root).size(), 4u);
  EXPECT_EQ(cli::find_test_cases(root / "test_pass"), std::vector<fs::path>{root / "test_pass"});
}

TEST(EngineCheckCli, PrintsOneLinePerCaseAndTheTotals) {
  const fs::path root = temp_dir("cli");
  write_case(root, "test_fail", {0, 2, 0, 5});
  write_case(root, "test_pass", {0, 2, 0, 4});
  write_case(root, "test_skip", {0, 0, 0, 0}, "Hardmax");
  CommandResult r = run_command(kCheck + " " + root.string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out,
            "FAIL test_fail: output 'y' index 3 [1,1]: got 4, expected 5\n"
            "PASS test_pass\n"
            "SKIP test_skip: node 'Hardmax_0' (Hardmax): op type 'Hardmax' is not supported\n"
            "1 passed, 1 failed, 1 skipped\n");
  // Looser tolerances turn the failure into a pass; compile flags are accepted too.
  r = run_command(kCheck + " --atol 1.5 --num_threads 2 " + root.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("2 passed, 0 failed, 1 skipped"), std::string::npos);
  EXPECT_NE(run_command(kCheck + " --num_threads 0 " + root.string()).exit_code, 0);
  r = run_command(kCheck + " --filter _pass$ " + root.string());
  EXPECT_EQ(r.out, "PASS test_pass\n1 passed, 0 failed, 0 skipped\n");

  const std::string known = (root / "known.txt").string();
  write_file(known, "test_fail: the engine deliberately differs\n");
  r = run_command(kCheck + " --known_failures " + known + " " + root.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("XFAIL test_fail: output 'y' index 3 [1,1]: got 4, expected 5 (known: the engine "
                       "deliberately differs)"),
            std::string::npos);
  EXPECT_NE(r.out.find("1 passed, 0 failed, 1 skipped, 1 known failures"), std::string::npos);
  write_file(known, "test_pass: stale entry\n");  // a listed case that passes fails the run
  r = run_command(kCheck + " --known_failures " + known + " " + root.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("XPASS test_pass"), std::string::npos);
  EXPECT_NE(r.out.find("0 passed, 2 failed, 1 skipped, 0 known failures"), std::string::npos);  // test_fail too

  r = run_command(kCheck + " /nonexistent");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "engine_check: /nonexistent: not a directory\n");
}

// A case is named after its directory however the path is spelt, so --filter and the
// known-failures file see its name; a run that checks no case is an error, not a pass.
TEST(EngineCheckCli, NamesCasesWhateverTheSpellingAndRefusesToCheckNothing) {
  const fs::path root = temp_dir("names");
  const fs::path one = write_case(root, "test_pass", {0, 2, 0, 4});
  EXPECT_EQ(cli::case_name(one.string() + "/"), "test_pass");
  EXPECT_EQ(cli::case_name(one / "."), "test_pass");
  EXPECT_EQ(cli::case_name(one / ".." / "test_pass" / ""), "test_pass");
  CommandResult r = run_command(kCheck + " --filter '^test_pass$' " + one.string() + "/");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "PASS test_pass\n1 passed, 0 failed, 0 skipped\n");
  r = run_command("cd " + one.string() + " && " + kCheck + " .");
  EXPECT_EQ(r.out, "PASS test_pass\n1 passed, 0 failed, 0 skipped\n");

  r = run_command(kCheck + " --filter nothing " + root.string() + "/");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "engine_check: none of the 1 test cases matches --filter 'nothing'\n");
  const fs::path empty = root / "empty";
  fs::create_directories(empty);
  r = run_command(kCheck + " " + empty.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "engine_check: no test case in " + empty.string() + "\n");
}

}  // namespace
}  // namespace minfer::test
