// engine_bench as a user runs it: reports in each format, and clean failures.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace {

const std::string kBench = MINFER_ENGINE_BENCH;
const std::string kSource = MINFER_SOURCE_DIR;

struct CommandResult {
  int exit_code;
  std::string out, err;
};

// Machine figures given as flags, so that no test but the probe's own measures the machine.
const std::string kMachine = " --peak_gflops 100 --bandwidth_gbs 10";

CommandResult run(const std::string& args) {
  const std::string err_file = std::filesystem::temp_directory_path() / ("engine_bench_err_" + std::to_string(getpid()));
  const std::string cmd = kBench + " " + args + (args.empty() ? "" : kMachine) + " 2>" + err_file;
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

TEST(EngineBenchCli, JsonReportHasTheDocumentedKeys) {
  CommandResult r = run("--model " + kSource + "/models/small_cnn.json --num_runs 3 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["ops"].size(), 9u);
  EXPECT_EQ(j["ops"][0]["kind"], "regular");
  EXPECT_EQ(j["ops"][0]["time_ms"].size(), 6u);
}

TEST(EngineBenchCli, TextAndCsvAndOutputFile) {
  CommandResult t = run("--model " + kSource + "/models/small_cnn.json --num_runs 2");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("Summary by node type"), std::string::npos);
  const std::string path = std::filesystem::temp_directory_path() / "engine_bench_test.csv";
  CommandResult c = run("--model " + kSource + "/models/small_cnn.json --num_runs 2 --format csv --output " + path);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::ifstream f(path);
  std::string header;
  std::getline(f, header);
  EXPECT_EQ(header.rfind("name,type,kind,output_shape,macs,flops", 0), 0u);
  std::filesystem::remove(path);
}

TEST(EngineBenchCli, BadModelIsOneLineAndNonZero) {
  const std::string bad = kSource + "/tests/data/bad_models/cycle.json";
  CommandResult r = run("--model " + bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "engine_bench: " + bad + ": node 'loop_a' (Add): is part of a cycle (its inputs depend on its own outputs)\n");
  EXPECT_TRUE(r.out.empty());
}

TEST(EngineBenchCli, BadFlagsAreRefused) {
  EXPECT_NE(run("--model " + kSource + "/models/small_cnn.json --num_runs 0").exit_code, 0);
  EXPECT_NE(run("--model " + kSource + "/models/small_cnn.json --format xml").exit_code, 0);
  EXPECT_NE(run("--model " + kSource + "/models/small_cnn.json --input_shape image:1,3,a").exit_code, 0);
  EXPECT_NE(run("").exit_code, 0);
  const std::string missing = "/nonexistent/model.json";
  CommandResult r = run("--model " + missing);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "engine_bench: " + missing + ": cannot open the file\n");
}

const std::string kDigits = kSource + "/models/digits_cnn.json";

TEST(EngineBenchCli, ImageIsClassifiedAndProfiled) {
  CommandResult r = run("--model " + kDigits + " --image " + kSource + "/models/samples/digit_7.png --num_runs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Classification"), std::string::npos);
  EXPECT_NE(r.out.find("  1. 7 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Run Order"), std::string::npos);
  EXPECT_NE(r.out.find("Roofline"), std::string::npos);
  EXPECT_TRUE(r.err.empty()) << "stderr is not a terminal, so no progress: " << r.err;
  CommandResult j = run("--model " + kDigits + " --image " + kSource +
                        "/models/samples/digit_4.png --num_runs 1 --format json --top_k 2");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto report = nlohmann::json::parse(j.out);
  EXPECT_EQ(report["classification"]["top"].size(), 2u);
  EXPECT_EQ(report["classification"]["top"][0]["label"], "4");
  EXPECT_EQ(report["machine"]["peak_source"], "flag");
  EXPECT_EQ(report["ops"][0]["bound"], "memory");  // conv1: 1 input channel, 18 FLOPs per output
}

TEST(EngineBenchCli, MeanAndStdFlagsOverrideTheModel) {
  // A mean of 100 drives every input far negative: the prediction changes.
  CommandResult r = run("--model " + kDigits + " --image " + kSource +
                        "/models/samples/digit_7.png --num_runs 1 --format json --mean 100 --std 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(nlohmann::json::parse(r.out)["classification"]["top"][0]["label"], "7");
  EXPECT_NE(run("--model " + kDigits + " --image x.png --mean 0.1,abc").exit_code, 0);
  CommandResult bad_std = run("--model " + kDigits + " --image x.png --std 0");
  EXPECT_EQ(bad_std.exit_code, 1);
  EXPECT_EQ(bad_std.err, "engine_bench: --std '0': 0 must be positive\n");
}

TEST(EngineBenchCli, UnreadableImageIsOneLineAndNonZero) {
  const std::string bad = kSource + "/models/digits_cnn.json";  // not an image
  CommandResult r = run("--model " + kDigits + " --image " + bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("engine_bench: " + bad + ": cannot read the image (", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_TRUE(r.out.empty());
}

TEST(EngineBenchCli, WritesTraceAndHtml) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string trace = dir / ("engine_bench_trace_" + std::to_string(getpid()) + ".json");
  const std::string html = dir / ("engine_bench_report_" + std::to_string(getpid()) + ".html");
  CommandResult r =
      run("--model " + kSource + "/models/small_cnn.json --num_runs 4 --trace " + trace + " --html " + html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream t(trace);
  const auto events = nlohmann::json::parse(t)["traceEvents"];
  EXPECT_EQ(std::count_if(events.begin(), events.end(), [](const auto& e) { return e["ph"] == "X"; }), 4 * 9);
  std::ifstream h(html);
  const std::string page((std::istreambuf_iterator<char>(h)), {});
  EXPECT_NE(page.find("<svg id=\"roofline-chart\""), std::string::npos);
  std::filesystem::remove(trace);
  std::filesystem::remove(html);
}

}  // namespace
