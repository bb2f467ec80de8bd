// engine_bench as a user runs it: reports in each format, and clean failures.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tests/bench/engine_bench_runner.h"

namespace {

using minfer::test::CommandResult;
const std::string& kSource = minfer::test::kSourceDir;
auto* const run = &minfer::test::run_engine_bench;

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

TEST(EngineBenchCli, DeconvMethodFlagOverridesEveryConvTranspose) {
  const std::string decoder = "--model " + kSource + "/models/deconv_decoder.json --num_runs 1 --format json";
  for (const auto& [flag, method, macs] : {std::tuple{"", "col2im", 71'892'992},
                                           {" --deconv_method col2im", "col2im", 71'892'992},
                                           {" --deconv_method conv", "conv", 282'656'768}}) {
    CommandResult r = run(decoder + flag);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["totals"]["macs"], macs) << flag;
    for (const auto& op : j["ops"])
      if (op["type"] == "ConvTranspose") {
        EXPECT_EQ(op["kind"], method);
        EXPECT_EQ(op["details"]["method"], method);
      }
  }
  EXPECT_NE(run(decoder + " --deconv_method fft").exit_code, 0);
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

}  // namespace
