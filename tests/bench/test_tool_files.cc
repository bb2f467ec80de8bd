// The files the tools read and write, as a user (or an attacker sharing a folder) meets
// them: FIFOs given as inputs are refused in one line rather than read forever; outputs
// onto devices, FIFOs and stdout are written in place and their errors reported;
// concurrent runs onto one --output each leave one whole report; one file is never
// given twice. Every command runs under `timeout`, so a regression fails, not hangs.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli_test_util.h"
#include "tests/onnx_test_util.h"
#include "tests/temp_files.h"

namespace minfer::test {
namespace {

namespace fs = std::filesystem;

const std::string kSource = MINFER_SOURCE_DIR;
const std::string kSmallCnn = kSource + "/models/small_cnn.json";
const std::string kMachine = " --peak_gflops 100 --bandwidth_gbs 10";

// 124 is timeout's status for a command it had to stop.
CommandResult run(const std::string& tool, const std::string& args) {
  return run_command("timeout 60 " + tool + " " + args);
}
CommandResult bench(const std::string& args) {
  return run(MINFER_ENGINE_BENCH, args);
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string fifo(const std::string& path) {
  EXPECT_EQ(mkfifo(path.c_str(), 0600), 0) << path;
  return path;
}

bool writable(const char* path) {
  return access(path, W_OK) == 0;
}

// Exit status 1, `message` as the one line on stderr after "<tool>: ", nothing on stdout.
void expect_refused(const CommandResult& r, const std::string& tool, const std::string& message) {
  EXPECT_EQ(r.exit_code, 1) << (r.exit_code == 124 ? "hung: stopped by timeout" : r.err);
  EXPECT_EQ(r.err, tool + ": " + message + "\n");
  EXPECT_EQ(r.out, "");
}

TEST(ToolFiles, OneFileGivenTwiceIsRefusedBeforeTheRun) {
  const std::string dir = temp_dir("out");
  // The model is bad too: the outputs are checked first, before anything is loaded or run.
  const std::string cycle = kSource + "/tests/data/bad_models/cycle.json";
  expect_refused(bench("--model " + cycle + " --output " + dir + "/x --trace " + dir + "/./x" + kMachine),
                 "engine_bench",
                 "--output '" + dir + "/x' and --trace '" + dir + "/./x' are the same file: give each output its own");
  expect_refused(
      bench("--compare " + kSmallCnn + " " + kSmallCnn + " --html " + dir + "/x --output " + dir + "/x" + kMachine),
      "engine_bench",
      "--output '" + dir + "/x' and --html '" + dir + "/x' are the same file: give each output its own");
  EXPECT_FALSE(fs::exists(dir + "/x"));
  // A device twice is fine: nothing is replaced.
  const CommandResult r =
      bench("--model " + kSmallCnn + " --num_runs 1 --output /dev/null --trace /dev/null" + kMachine);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// The files a model reads beside itself (weights, labels, external data) are inputs too:
// an output onto one is refused before any run, for one model and for either --compare side.
TEST(ToolFiles, AnOutputOntoAFileTheModelReadsIsRefused) {
  const std::string dir = temp_dir("model_files");
  const std::string weights(16, '\0');
  write_file(dir + "/w.bin", weights);
  write_file(dir + "/labels.txt", "a\nb\nc\nd\n");
  write_file(dir + "/m.json",
             R"({"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["y"], "weights_file": "w.bin",
                 "labels": "labels.txt", "initializers": {"b": {"shape": [4], "offset": 0}},
                 "nodes": [{"name": "add", "op": "Add", "inputs": ["x", "b"], "outputs": ["y"]}]})");
  const std::string model = dir + "/m.json";
  expect_refused(bench("--model " + model + " --output " + dir + "/w.bin" + kMachine), "engine_bench",
                 "--output '" + dir + "/w.bin' is the data file of the model '" + dir +
                     "/w.bin': write the output to another file");
  expect_refused(bench("--model " + model + " --num_runs 1 --html " + dir + "/labels.txt" + kMachine), "engine_bench",
                 "--html '" + dir + "/labels.txt' is the data file of the model '" + dir +
                     "/labels.txt': write the output to another file");
  expect_refused(
      bench("--compare " + kSmallCnn + " " + model + " --output " + dir + "/w.bin" + kMachine), "engine_bench",
      "--output '" + dir + "/w.bin' is the data file of side B '" + dir + "/w.bin': write the output to another file");
  EXPECT_EQ(read(dir + "/w.bin"), weights);
  EXPECT_EQ(read(dir + "/labels.txt"), "a\nb\nc\nd\n");
}

TEST(ToolFiles, ConcurrentRunsOntoOneOutputEachLeaveAWholeReport) {
  const std::string dir = temp_dir("concurrent");
  const std::string report = dir + "/r.json";
  for (int round = 0; round < 10; ++round) {
    std::string script;
    for (int i = 0; i < 4; ++i)
      script += fmt::format(
          "(timeout 60 {} --model {} --num_runs 2 --format json --output {}{} 2>{}/err{}; echo $? >{}/rc{}) & ",
          MINFER_ENGINE_BENCH, kSmallCnn, report, kMachine, dir, i, dir, i);
    const CommandResult r = run_command(script + "wait");
    ASSERT_EQ(r.exit_code, 0);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(read(fmt::format("{}/rc{}", dir, i)), "0\n") << read(fmt::format("{}/err{}", dir, i));
      fs::remove(fmt::format("{}/rc{}", dir, i));
      fs::remove(fmt::format("{}/err{}", dir, i));
    }
    // One whole report: it parses (a mixed file would not, or would leave trailing bytes).
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(read(report))) << "round " << round;
    EXPECT_EQ(j["runs"], 2);
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
    EXPECT_EQ(left, std::vector<std::string>{"r.json"}) << "temporary files left behind";
  }
}

TEST(ToolFiles, DevicesFifosAndStdoutAreWrittenInPlace) {
  const std::string dir = temp_dir("out");
  struct stat before {
  }, after{};
  ASSERT_EQ(stat("/dev/null", &before), 0);
  CommandResult r = bench("--model " + kSmallCnn + " --num_runs 1 --output /dev/null" + kMachine);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  ASSERT_EQ(stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode)) << "/dev/null was replaced";
  EXPECT_EQ(after.st_ino, before.st_ino);

  // A FIFO with a reader: the report goes through it and the FIFO stays.
  const std::string pipe = fifo(dir + "/pipe");
  r =
      run_command(fmt::format("timeout 60 cat {} > {}/got & timeout 60 {} --model {} --num_runs 1 --format json "
                              "--output {}{}; status=$?; wait; exit $status",
                              pipe, dir, MINFER_ENGINE_BENCH, kSmallCnn, pipe, kMachine));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(read(dir + "/got"))["runs"], 1);
  EXPECT_TRUE(fs::is_fifo(pipe));

  // --output /dev/stdout goes through the descriptor the shell gave, here a file.
  r = run_command(
      fmt::format("timeout 60 {} --model {} --num_runs 1 --format json --output /dev/stdout{} > {}/stdout.json",
                  MINFER_ENGINE_BENCH, kSmallCnn, kMachine, dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(read(dir + "/stdout.json"))["runs"], 1);
}

TEST(ToolFiles, AFullDeviceIsOneLineAndExitOne) {
  if (!writable("/dev/full")) GTEST_SKIP() << "no writable /dev/full";
  const std::string dir = temp_dir("out");
  expect_refused(
      bench("--model " + kSmallCnn + " --num_runs 1 --output " + dir + "/r.txt --trace /dev/full" + kMachine),
      "engine_bench", "/dev/full: cannot write (No space left on device)");
  EXPECT_FALSE(fs::exists(dir + "/r.txt")) << "the group's other file was left";
  const CommandResult r = run_command("timeout 60 " + std::string(MINFER_ENGINE_BENCH) + " --model " + kSmallCnn +
                                      " --num_runs 1" + kMachine + " > /dev/full");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "engine_bench: stdout: cannot write (No space left on device)\n");
  const CommandResult check = run_command("timeout 60 " + std::string(MINFER_ENGINE_CHECK) + " " +
                                          MINFER_ONNX_TESTDATA + "/node/test_relu > /dev/full");
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_EQ(check.err, "engine_check: stdout: cannot write (No space left on device)\n");
  struct stat st {};
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(ToolFiles, FifosGivenAsInputsAreRefusedInOneLine) {
  const std::string dir = temp_dir("in");
  const std::string model = fifo(dir + "/fifo.json");
  expect_refused(bench("--model " + model + kMachine), "engine_bench", model + ": is a FIFO, not a regular file");
  expect_refused(bench("--compare " + model + " " + kSmallCnn + kMachine), "engine_bench",
                 "--compare A: " + model + ": is a FIFO, not a regular file");
  expect_refused(run(MINFER_ENGINE_CONVERT, model + " " + dir + "/out.onnx"), "engine_convert",
                 model + ": is a FIFO, not a regular file");

  const std::string image = fifo(dir + "/image.png");
  expect_refused(bench("--model " + kSource + "/models/digits_cnn.json --image " + image + kMachine), "engine_bench",
                 image + ": is a FIFO, not a regular file");

  // The machine cache is read only when a figure is not given by a flag.
  const std::string cache = fifo(dir + "/machine.json");
  expect_refused(bench("--model " + kSmallCnn + " --machine_cache " + cache), "engine_bench",
                 "machine cache " + cache + ": is a FIFO, not a regular file");

  // Files a model names.
  const std::string weights_dir = temp_dir("weights");
  fifo(weights_dir + "/w.bin");
  write_file(weights_dir + "/m.json",
             R"({"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["y"], "weights_file": "w.bin",
                 "initializers": {"b": {"shape": [4], "offset": 0}},
                 "nodes": [{"name": "add", "op": "Add", "inputs": ["x", "b"], "outputs": ["y"]}]})");
  expect_refused(bench("--model " + weights_dir + "/m.json" + kMachine), "engine_bench",
                 weights_dir + "/m.json: weights file 'w.bin': is a FIFO, not a regular file");
  expect_refused(run(MINFER_ENGINE_CONVERT, weights_dir + "/m.json " + dir + "/out.onnx"), "engine_convert",
                 weights_dir + "/m.json: weights file 'w.bin': is a FIFO, not a regular file");
  write_file(weights_dir + "/labels.json",
             R"({"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["y"], "labels": "w.bin",
                 "nodes": [{"name": "relu", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}]})");
  expect_refused(bench("--model " + weights_dir + "/labels.json" + kMachine), "engine_bench",
                 weights_dir + "/labels.json: labels file 'w.bin': is a FIFO, not a regular file");

  // engine_check: its known-failures list and a case's tensor files.
  expect_refused(run(MINFER_ENGINE_CHECK, "--known_failures " + cache + " " + dir), "engine_check",
                 "--known_failures " + cache + ": is a FIFO, not a regular file");
  OnnxBuilder b;
  b.input("x", {4}).output("y");
  b.node("Relu", {"x"}, {"y"}, "relu");
  const std::string cases = temp_dir("cases") + "/test_relu";
  fs::create_directories(cases + "/test_data_set_0");
  write_file(cases + "/model.onnx", b.bytes());
  fifo(cases + "/test_data_set_0/input_0.pb");
  const CommandResult r = run(MINFER_ENGINE_CHECK, cases);
  EXPECT_EQ(r.exit_code, 1) << (r.exit_code == 124 ? "hung: stopped by timeout" : r.err);
  EXPECT_NE(r.out.find("FAIL test_relu: " + cases + "/test_data_set_0/input_0.pb: is a FIFO, not a regular file\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace minfer::test
