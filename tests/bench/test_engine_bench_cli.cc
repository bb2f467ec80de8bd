// engine_bench as a user runs it: reports in each format, and clean failures.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "bench/cli_common.h"
#include "engine/engine.h"
#include "profiler/isa.h"
#include "tests/cli_test_util.h"
#include "tests/onnx_test_util.h"
#include "tests/temp_files.h"

namespace minfer::test {
namespace {

const std::string kBench = MINFER_ENGINE_BENCH;
const std::string kSource = MINFER_SOURCE_DIR;

// Machine figures given as flags, so that no test but the probe's own measures the machine.
const std::string kMachine = " --peak_gflops 100 --bandwidth_gbs 10";

CommandResult run(const std::string& args) {
  return run_command(kBench + " " + args + (args.empty() ? "" : kMachine));
}

TEST(EngineBenchCli, JsonReportHasTheDocumentedKeys) {
  CommandResult r = run("--model " + kSource + "/models/small_cnn.json --num_runs 3 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["ops"].size(), 7u);  // 9 nodes, both Relus fused into their Convs
  EXPECT_EQ(j["ops"][0]["kind"], "regular");
  EXPECT_EQ(j["ops"][0]["time_ms"].size(), 6u);
  EXPECT_EQ(j["unprofiled_runs"], 3);  // one after each profiled run
  EXPECT_GT(j["latency_ms_unprofiled"]["min"].get<double>(), 0.0);
  EXPECT_GT(j["init_ms"]["load"].get<double>(), 0.0);
  EXPECT_GT(j["init_ms"]["compile"].get<double>(), 0.0);
}

TEST(EngineBenchCli, ExplainAndVerboseAddToTheText) {
  const std::string model = "--model " + kSource + "/models/small_cnn.json --num_runs 1";
  CommandResult plain = run(model);
  CommandResult more = run(model + " --explain --verbose");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(more.exit_code, 0) << more.err;
  for (const char* s : {"Cost formulas", "\n    before: MACs "}) {
    EXPECT_EQ(plain.out.find(s), std::string::npos) << s;
    EXPECT_NE(more.out.find(s), std::string::npos) << s;
  }
  EXPECT_NE(plain.out.find("\nfuse: 2 Relus fused: "), std::string::npos) << plain.out;
}

TEST(EngineBenchCli, FuseFlagKeepsActivationsAsTheirOwnNodes) {
  for (const auto& [flag, ops] : {std::pair{"0", 9u}, std::pair{"1", 7u}}) {
    CommandResult r = run("--model " + kSource + "/models/small_cnn.json --num_runs 1 --format json --fuse " + flag);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["ops"].size(), ops) << "--fuse " << flag;
    EXPECT_EQ(j["ops"][0]["details"].contains("fused_activation"), std::string(flag) == "1");
  }
}

TEST(EngineBenchCli, TextAndCsvAndOutputFile) {
  CommandResult t = run("--model " + kSource + "/models/small_cnn.json --num_runs 2");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("Summary by node type"), std::string::npos);
  const std::string path = test::temp_dir("out") + "/engine_bench_test.csv";
  CommandResult c = run("--model " + kSource + "/models/small_cnn.json --num_runs 2 --format csv --output " + path);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::ifstream f(path);
  std::string header;
  std::getline(f, header);
  EXPECT_EQ(header.rfind("name,type,kind,output_shape,macs,flops", 0), 0u);
  std::filesystem::remove(path);
}

TEST(EngineBenchCli, MemoryPlanListsEveryBuffer) {
  CommandResult r = run("--model " + kSource + "/models/small_cnn.json --num_runs 1 --memory_plan");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string plan = r.out.substr(r.out.find("Memory plan"));
  // The Relus are fused (7 steps). conv2 (8 -> 16 channels, 3x3 on 16x16) has scratch
  // that depends on the kernel the target binds; conv1's direct kernel and pool1's max
  // pool keep theirs in the thread scratch, alive through the run, whose size is the
  // largest any step needs. Scalar: conv2 by im2col + GEMM, the B panels of its one
  // k-block, K = 8*9 x N = 16*16 floats, plus 16 floats of alignment slack = 73,792 (its
  // weights are packed at load, so no A scratch); the thread scratch is conv1's padded
  // input rows, each of its 3 channels' 10 input rows of a band of 8 output rows, 34
  // floats each (4,080 bytes), in whole lines 4,096; the peak is at conv2: the image (kept
  // for the next run) 12,288 + pool1 8,192 + relu2 16,384 + 73,792 + 4,096 = 114,752.
  // AVX-512: the blocked direct convolution, the NCHWc input with its zero border (the
  // input's 8 channels, fewer than its block of 16, x 18 x 18) = 10,368, and one thread's
  // partial sums (16 output channels x 16 x 16) = 16,384 of thread scratch. AVX2 (8
  // channels: a whole block): Winograd F(2x2, 3x3), the same input copy and a flag byte
  // per copied row (18, in one 64-byte line) = 10,432, and one band of all 8 x 8 tiles in
  // the thread scratch:
  // transformed input 16 x 8 x 64 floats, products 16 x 16 x 64, the NCHWc band
  // 16 x 16 x 16, the bias 16, a byte per tile (16 floats): 4 x 28,704 = 114,816 (each
  // piece whole cache lines). On both the peak is at pool1: the thread scratch + the
  // image + relu1 32,768 + pool1 8,192.
  const std::string scratch = active_isa() == Isa::kScalar ? "73,792"
                              : active_isa() == Isa::kAvx2 ? "10,432"
                                                           : "10,368";
  const std::string kept = active_isa() == Isa::kScalar ? "4,096" : active_isa() == Isa::kAvx2 ? "114,816" : "16,384";
  const std::string arena = active_isa() == Isa::kScalar ? "114,752"
                            : active_isa() == Isa::kAvx2 ? "168,064"
                                                         : "69,632";
  EXPECT_NE(plan.find("Arena: " + arena + " bytes; lower bound (most bytes alive at one step) " + arena),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("12,288      0      6  #######  image"), std::string::npos) << plan;
  EXPECT_NE(plan.find(scratch + "      2      2  ..#....  conv2+relu2:workspace"), std::string::npos) << plan;
  EXPECT_NE(plan.find(kept + "      0      6  #######  thread scratch"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("conv1+relu1:workspace"), std::string::npos) << plan;
}

TEST(EngineBenchCli, MemoryPlanShowsTheLstmCellBuffers) {
  CommandResult r = run("--model " + kSource + "/models/lstm.json --num_runs 1 --memory_plan");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string cell = r.out.substr(r.out.find("Inside lstm (LSTM): cell_buffers\n"));
  // The minimal plan: six tensors of H = 256 floats in four 1 KB buffers.
  for (const char* row : {"           0        1,024      0      6  #######  cell_state",
                          "       2,048        1,024      0      4  #####..  input_gate",
                          "       3,072        1,024      3      4  ...##..  cell_gate"})
    EXPECT_NE(cell.find(row), std::string::npos) << row << "\n" << cell;
}

TEST(EngineBenchCli, LstmPlanFlagReachesTheReport) {
  const std::string model = "--model " + kSource + "/models/lstm.json --num_runs 1";
  for (const char* plan : {"minimal", "fused"}) {
    CommandResult r = run(model + " --format json --lstm_plan " + plan);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto details = nlohmann::json::parse(r.out)["ops"][0]["details"];
    EXPECT_EQ(details["plan"], plan);
    // H 256, batch 1: the minimal plan's two scratch buffers of B*H floats, the fused
    // one's gate inputs of all 32 steps, 32 x B x 4H.
    EXPECT_EQ(details["scratch_bytes"], std::string(plan) == "minimal" ? 2 * 4 * 256 : 32 * 4 * 4 * 256);
    EXPECT_EQ(details["state_bytes"], 2 * 4 * 256);
  }
  CommandResult text = run(model);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("== Op details =="), std::string::npos);
  EXPECT_NE(text.out.find("lstm (LSTM/minimal)\n"), std::string::npos);
  EXPECT_NE(text.out.find("  plan: minimal\n"), std::string::npos);
  EXPECT_NE(text.out.find("name=cell_state bytes=1,024 first_step=0 last_step=6 offset=0"), std::string::npos);
  EXPECT_NE(run(model + " --lstm_plan tiny").exit_code, 0);
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
  EXPECT_EQ(r.err, "engine_bench: " + bad +
                       ": node 'loop_a' (Add): is part of a cycle (its inputs depend on its own outputs)\n");
  EXPECT_TRUE(r.out.empty());
}

TEST(EngineBenchCli, BadFlagsAreRefused) {
  EXPECT_NE(run("--model " + kSource + "/models/small_cnn.json --num_runs 0").exit_code, 0);
  EXPECT_NE(run("--model " + kSource + "/models/small_cnn.json --format xml").exit_code, 0);
  EXPECT_NE(run("--model " + kSource + "/models/small_cnn.json --input_shape image:1,3,a").exit_code, 0);
  EXPECT_NE(run("--model " + kSource + "/models/small_cnn.json --fold_bn 2").exit_code, 0);
  EXPECT_NE(run("").exit_code, 0);
  const std::string missing = "/nonexistent/model.json";
  CommandResult r = run("--model " + missing);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "engine_bench: " + missing + ": cannot open the file (No such file or directory)\n");
}

TEST(EngineBenchCli, RunsOnnxModelsAsNetJson) {
  OnnxBuilder b;
  b.input("x", {-1, 3, 8, 8}).output("y");
  b.initializer("W", {4, 3, 3, 3}, std::vector<float>(108, 0.01f));
  b.node("Conv", {"x", "W"}, {"c"}, "conv");
  b.node("Relu", {"c"}, {"y"});
  const std::string path = b.save("model.onnx");
  CommandResult r = run("--model " + path + " --num_runs 2 --format json --input_shape x:2,3,8,8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["ops"].size(), 1u);  // the Relu fused into the Conv
  EXPECT_EQ(j["ops"][0]["details"]["fused_activation"], "Relu");
  EXPECT_EQ(j["totals"]["macs"], 2 * 3 * 3 * 3 * 4 * 6 * 6);  // by hand: N*Kh*Kw*Cin*Cout*Hout*Wout
  CommandResult dynamic = run("--model " + path);
  EXPECT_EQ(dynamic.exit_code, 1);
  EXPECT_EQ(dynamic.err, "engine_bench: " + path +
                             ": input 'x' has dynamic dimension 0 ('N'); give a static shape with --input_shape "
                             "x:d1,d2,...\n");
}

// Token ids (int64) into an embedding table: engine_bench feeds ids of 0, which index any
// table, where random integers could index past its end (a table of 3 rows: row 0 is
// 0.5, 1.5, so the output 1.0 is that row's mean and no other).
TEST(EngineBenchCli, Int64InputsAreFedZeros) {
  OnnxBuilder b;
  b.input("ids", {2, 5}, DataType::kInt64).output("y");
  b.initializer("table", {3, 2}, {0.5f, 1.5f, 7, 9, 20, 30});
  b.node("Gather", {"table", "ids"}, {"emb"});
  b.node("ReduceMean", {"emb"}, {"y"});
  const std::string path = b.save("embedding.onnx");
  CommandResult r = run("--model " + path + " --num_runs 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Session session(compile_file(path));
  cli::fill_inputs_deterministic(session);
  session.run();
  EXPECT_EQ(session.output("y")[0], 1.0f);
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
  const std::string dir = test::temp_dir("out");
  const std::string trace = dir + "/trace.json";
  const std::string html = dir + "/report.html";
  CommandResult r =
      run("--model " + kSource + "/models/small_cnn.json --num_runs 4 --trace " + trace + " --html " + html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream t(trace);
  const auto events = nlohmann::json::parse(t)["traceEvents"];
  EXPECT_EQ(std::count_if(events.begin(), events.end(), [](const auto& e) { return e["ph"] == "X"; }), 4 * 7);
  std::ifstream h(html);
  const std::string page((std::istreambuf_iterator<char>(h)), {});
  EXPECT_NE(page.find("<svg id=\"roofline-chart\""), std::string::npos);
  std::filesystem::remove(trace);
  std::filesystem::remove(html);
}

}  // namespace
}  // namespace minfer::test
