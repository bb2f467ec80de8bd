// The report joins costs and times correctly, and every format renders the same numbers.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "profiler/report.h"
#include "tests/op_test_util.h"
#include "tests/profiler/literal_cost.h"
#include "tests/profiler/test_machine.h"

namespace minfer {
namespace {

ReportInput two_ops() {
  ReportInput in;
  in.model_name = "m";
  in.model_file = "m.json";
  in.inputs = {{"x", {1, 4}}};
  in.outputs = {{"y", {1, 4}}};
  in.kernel_isa = "avx2";
  in.peak_activation_bytes = 128;
  in.latency_ms = {4.0, 2.0};
  in.ops.push_back({"conv", "Conv", "regular", {1, 4}, test::literal_cost({100, 200, 10, 40, 16}), {3.0, 1.0}});
  in.ops.push_back({"relu", "Relu", "", {1, 4}, test::literal_cost({0, 4, 0, 16, 16}), {1.0, 1.0}});
  return in;
}

TEST(Report, JoinsCostAndTime) {
  const nlohmann::json r = build_report(two_ops());
  EXPECT_EQ(r["runs"], 2);
  EXPECT_EQ(r["totals"]["macs"], 100);
  EXPECT_EQ(r["totals"]["flops"], 204);
  EXPECT_EQ(r["totals"]["weight_bytes"], 40);
  EXPECT_EQ(r["latency_ms"]["mean"], 3.0);
  EXPECT_EQ(r["latency_ms"]["first"], 4.0);
  EXPECT_EQ(r["kernel_isa"], "avx2");
  const auto& conv = r["ops"][0];
  EXPECT_EQ(conv["time_ms"]["mean"], 2.0);
  EXPECT_DOUBLE_EQ(conv["percent"].get<double>(), 200.0 / 3.0);  // 2 ms of 3 ms summed op time
  EXPECT_DOUBLE_EQ(conv["gflops_per_s"].get<double>(), 200 / (2.0 * 1e6));
  EXPECT_DOUBLE_EQ(r["ops"][1]["start_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(r["ops"][1]["cdf_percent"].get<double>(), 100.0);
  for (const char* key : {"model", "threads", "runs", "totals", "latency_ms", "ops"})
    EXPECT_TRUE(r.contains(key)) << key;
  for (const char* key : {"macs", "flops", "params", "weight_bytes", "peak_activation_bytes"})
    EXPECT_TRUE(r["totals"].contains(key)) << key;
  for (const char* key : {"name", "type", "kind", "output_shape", "macs", "flops", "params", "bytes_read",
                          "bytes_written", "time_ms", "percent", "gflops_per_s"})
    EXPECT_TRUE(conv.contains(key)) << key;
}

TEST(Report, TextAndCsvRenderTheJson) {
  const nlohmann::json r = build_report(two_ops());
  const std::string text = format_text(r);
  for (const char* section : {"Run Order", "Top by Computation Time", "Top by Memory Use", "Summary by node type",
                              "Totals", "FLOPs estimate"})
    EXPECT_NE(text.find(section), std::string::npos) << section;
  EXPECT_NE(text.find("Conv/regular"), std::string::npos);
  EXPECT_NE(text.find("\nKernels:  avx2\n"), std::string::npos) << text;
  const std::string csv = format_csv(r);
  EXPECT_NE(csv.find("conv,Conv,regular,1x4,100,200,10,40,16,3.000000,2.000000"), std::string::npos) << csv;
}

TEST(Report, OpDetailsAreRenderedGenerically) {
  ReportInput in = two_ops();
  in.ops[0].details = {{"method", "col2im"},
                       {"bytes", 4096},
                       {"steps", {"a = b", "c = d"}},
                       {"buffers", {{{"offset", 0}, {"name", "x"}}}}};
  const std::string text = format_text(build_report(in));
  const size_t at = text.find("Op details");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(text.find("conv (Conv/regular)\n"
                      "  buffers:\n"
                      "    [0] name=x offset=0\n"
                      "  bytes: 4,096\n"
                      "  method: col2im\n"
                      "  steps:\n"
                      "    [0] a = b\n"
                      "    [1] c = d\n",
                      at),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("relu (Relu)"), std::string::npos);  // no details, not listed
  EXPECT_EQ(format_text(build_report(two_ops())).find("Op details"), std::string::npos);
}

TEST(Report, SeparablePairsWithTheirSavings) {
  ReportInput in = two_ops();
  EXPECT_TRUE(build_report(in)["separable_pairs"].empty());
  EXPECT_EQ(format_text(build_report(in)).find("Depthwise-separable"), std::string::npos);
  // Seed 003: 3x3 depthwise + 1x1 pointwise, 64 -> 128 on 112x112.
  in.separable_pairs.push_back({"dw", "pw", {"bn", "relu"}, {3, 3}, 64, 128, 7'225'344, 102'760'448, 924'844'032});
  const nlohmann::json r = build_report(in);
  const auto& p = r["separable_pairs"][0];
  EXPECT_EQ(p["depthwise"], "dw");
  EXPECT_EQ(p["through"], (std::vector<std::string>{"bn", "relu"}));
  EXPECT_EQ(p["separable_macs"], 109'985'792);
  EXPECT_EQ(p["regular_macs"], 924'844'032);
  // K*K*Cout / (K*K + Cout) = 9 * 128 / 137.
  EXPECT_DOUBLE_EQ(p["ratio"].get<double>(), 9.0 * 128 / 137);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("Depthwise-separable pairs"), std::string::npos);
  EXPECT_NE(text.find("7,225,344    102,760,448    109,985,792    924,844,032    8.41x  3x3 64->128"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("dw -> bn -> relu -> pw"), std::string::npos);
}

TEST(Report, NumberFormatting) {
  EXPECT_EQ(with_commas(568740352), "568,740,352");
  EXPECT_EQ(with_commas(-1000), "-1,000");
  EXPECT_EQ(with_commas(12), "12");
  EXPECT_EQ(si_units(568740352), "568.74 M");
  EXPECT_EQ(si_units(999), "999");
}

// A 512x512x512 GEMM and a ReLU over 16 Mi floats, with their costs by the spec's formulas.
ReportInput gemm_and_relu() {
  ReportInput in;
  in.model_name = "roof";
  in.model_file = "roof.json";
  in.latency_ms = {30.0};
  const int64_t n = 512, elements = int64_t{16} << 20;
  Cost gemm{n * n * n, 2 * n * n * n, n * n, 4 * 2 * n * n, 4 * n * n};  // 2 MiB read, 1 MiB written
  Cost relu{0, elements, 0, 4 * elements, 4 * elements};
  in.ops.push_back({"gemm", "Gemm", "", {n, n}, test::literal_cost(gemm), {5.3687091}});  // half the 100 GFLOP/s peak
  in.ops.push_back({"relu", "Relu", "", {elements}, test::literal_cost(relu), {20.0}});
  in.machine = test::test_machine();
  return in;
}

TEST(Report, LargeGemmIsComputeBoundLargeReluMemoryBound) {
  const nlohmann::json r = build_report(gemm_and_relu());
  const auto& gemm = r["ops"][0];
  // 268,435,456 FLOPs over 3 MiB: 85.33 FLOPs/byte, above the ridge at 10.
  EXPECT_DOUBLE_EQ(gemm["arithmetic_intensity"].get<double>(), 268435456.0 / 3145728.0);
  EXPECT_EQ(gemm["bound"], "compute");
  EXPECT_DOUBLE_EQ(gemm["roofline_gflops_per_s"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(gemm["roofline_ms"].get<double>(), 268435456.0 / 100e6);  // 2.684 ms
  EXPECT_NEAR(gemm["gflops_per_s"].get<double>(), 50.0, 1e-6);
  EXPECT_NEAR(gemm["roofline_fraction"].get<double>(), 0.5, 1e-8);
  EXPECT_NEAR(gemm["gbytes_per_s"].get<double>(), 3145728.0 / 5.3687091e6, 1e-9);

  const auto& relu = r["ops"][1];
  // 1 FLOP per 8 bytes: 0.125, far below the ridge; 128 MiB at 10 GB/s is 13.42 ms.
  EXPECT_DOUBLE_EQ(relu["arithmetic_intensity"].get<double>(), 0.125);
  EXPECT_EQ(relu["bound"], "memory");
  EXPECT_DOUBLE_EQ(relu["roofline_gflops_per_s"].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(relu["roofline_ms"].get<double>(), 134217728.0 / 10e6);
  EXPECT_DOUBLE_EQ(relu["roofline_fraction"].get<double>(), 13.4217728 / 20.0);
  EXPECT_DOUBLE_EQ(relu["gbytes_per_s"].get<double>(), 134217728.0 / 20e6);

  const auto& t = r["totals"];
  EXPECT_DOUBLE_EQ(t["roofline_ms"].get<double>(), 2.68435456 + 13.4217728);
  EXPECT_DOUBLE_EQ(t["roofline_fraction"].get<double>(), (2.68435456 + 13.4217728) / 30.0);
  EXPECT_DOUBLE_EQ(t["arithmetic_intensity"].get<double>(), (268435456.0 + 16777216.0) / (3145728.0 + 134217728.0));
  EXPECT_EQ(r["machine"]["peak_gflops"], 100.0);
  EXPECT_EQ(r["machine"]["ridge_intensity"], 10.0);
  EXPECT_EQ(r["machine"]["theoretical"]["flops_per_cycle"], 32);        // 2 x 2 x 256 / 32
  EXPECT_EQ(r["machine"]["theoretical"]["peak_gflops"], 2 * 2.5 * 32);  // 160
}

TEST(Report, WithoutAMachineThereAreNoRooflineFigures) {
  ReportInput in = gemm_and_relu();
  in.machine.reset();
  const nlohmann::json r = build_report(in);
  EXPECT_FALSE(r.contains("machine"));
  for (const auto& op : r["ops"]) {
    EXPECT_TRUE(op.contains("arithmetic_intensity"));
    EXPECT_TRUE(op.contains("gbytes_per_s"));
    for (const char* key : {"bound", "roofline_ms", "roofline_fraction", "roofline_gflops_per_s"})
      EXPECT_FALSE(op.contains(key)) << key;
  }
  EXPECT_FALSE(r["totals"].contains("roofline_ms"));
  const std::string text = format_text(r);
  EXPECT_EQ(text.find("Machine"), std::string::npos);
  EXPECT_NE(text.find("[%roof]"), std::string::npos);
  EXPECT_NE(format_csv(r).find("relu,Relu,,16777216,"), std::string::npos);
}

TEST(Report, TextAndCsvShowTheRoofline) {
  const nlohmann::json r = build_report(gemm_and_relu());
  const std::string text = format_text(r);
  for (const char* s :
       {"Machine", "Test CPU (fma3+avx2, 256-bit vectors)", "100.0 GFLOP/s measured (flag)",
        "160.0 GFLOP/s theoretical", "2 cores x 2.50 GHz x 32 FLOPs/cycle",
        "L1 10.0, L2 10.0, L3 10.0, memory 10.0 (flag)", "L1 65.54 KB, L2 2.10 MB, L3 33.55 MB for the threads in use",
        "[level]", "Ridge point:       10.00", "[FLOP/B]", "[%roof]", "[bound]", "Roofline", "Arithmetic intensity"})
    EXPECT_NE(text.find(s), std::string::npos) << s;
  // The gemm row: 85.33 FLOPs/byte, 0.59 GB/s, 50.0% of its roof, compute-bound, its
  // 3 MiB in the L3; the relu's 128 MiB in main memory.
  EXPECT_NE(text.find("85.33     0.59    50.0% compute     l3"), std::string::npos) << text;
  EXPECT_NE(text.find("67.1%  memory   dram"), std::string::npos) << text;
  const std::string csv = format_csv(r);
  EXPECT_NE(csv.find(",arithmetic_intensity,gbytes_per_s,roofline_gflops_per_s,roofline_fraction,bound,memory_level\n"),
            std::string::npos);
  EXPECT_NE(csv.find(",0.1250,6.7109,1.2500,0.6711,memory,dram\n"), std::string::npos) << csv;
}

// The same classification from ops the engine compiled, costed and timed itself.
TEST(Report, RealGemmIsComputeBoundRealReluMemoryBound) {
  using test::input;
  using test::weight;
  const int64_t n = 256, elements = int64_t{1} << 22;
  const std::vector<Graph> graphs = {
      test::single_op_graph(
          "Gemm", {input({n, n}, test::random_values(n * n, 1)), weight({n, n}, test::random_values(n * n, 2))}),
      test::single_op_graph("Relu", {input({elements}, test::random_values(elements, 3))})};
  const char* expected_bound[] = {"compute", "memory"};
  // Gemm: 2 x 256^3 FLOPs over 3 x 256^2 floats; Relu: 1 FLOP per 8 bytes.
  const double expected_intensity[] = {2.0 * n * n * n / (12.0 * n * n), 0.125};
  for (size_t g = 0; g < graphs.size(); ++g) {
    SCOPED_TRACE(graphs[g].nodes[0].op_type);
    Session s(compile(graphs[g]));
    s.run();
    s.run();
    const nlohmann::json r = profile_report(s, 0, test::test_machine());
    const auto& op = r["ops"][0];
    EXPECT_EQ(op["bound"], expected_bound[g]);
    EXPECT_DOUBLE_EQ(op["arithmetic_intensity"].get<double>(), expected_intensity[g]);
    EXPECT_DOUBLE_EQ(op["roofline_gflops_per_s"].get<double>(), std::min(100.0, expected_intensity[g] * 10.0));
    const double mean_ms = op["time_ms"]["mean"].get<double>();
    ASSERT_GT(mean_ms, 0);
    EXPECT_DOUBLE_EQ(op["gflops_per_s"].get<double>(), op["flops"].get<double>() / (mean_ms * 1e6));
    EXPECT_DOUBLE_EQ(op["roofline_fraction"].get<double>(), op["roofline_ms"].get<double>() / mean_ms);
  }
}

// [cdf%] accumulates [%] down each table as that table is sorted (TensorFlow's
// benchmark_model): by time b, c, a; by memory a, c, b.
TEST(Report, CdfAccumulatesDownEachTable) {
  ReportInput in;
  in.model_name = "m";
  in.model_file = "m.json";
  in.latency_ms = {6.0};
  in.ops.push_back({"a", "Relu", "", {4}, test::literal_cost({0, 4, 0, 16, 3000}), {1.0}});
  in.ops.push_back({"b", "Relu", "", {4}, test::literal_cost({0, 4, 0, 16, 1000}), {3.0}});
  in.ops.push_back({"c", "Relu", "", {4}, test::literal_cost({0, 4, 0, 16, 2000}), {2.0}});
  const std::string text = format_text(build_report(in));
  auto section = [&](const std::string& title) {
    const size_t begin = text.find(title);
    return text.substr(begin, text.find("\n\n=", begin) + 1 - begin);
  };
  // The row of op `name` in `table` shows these [%] and [cdf%].
  auto expect_row = [&](const std::string& table, const std::string& name, const char* percent, const char* cdf) {
    const std::string rows = section(table);
    const size_t at = rows.find(" " + name + "\n");
    ASSERT_NE(at, std::string::npos) << table << " " << name;
    const std::string row = rows.substr(rows.rfind('\n', at) + 1, at - rows.rfind('\n', at));
    EXPECT_NE(row.find(fmt::format("{:>6}% {:>6}%", percent, cdf)), std::string::npos) << table << "\n" << row;
  };
  expect_row("Run Order", "a", "16.67", "16.67");
  expect_row("Run Order", "b", "50.00", "66.67");
  expect_row("Run Order", "c", "33.33", "100.00");
  expect_row("Top by Computation Time", "b", "50.00", "50.00");
  expect_row("Top by Computation Time", "c", "33.33", "83.33");
  expect_row("Top by Computation Time", "a", "16.67", "100.00");
  expect_row("Top by Memory Use", "a", "16.67", "16.67");
  expect_row("Top by Memory Use", "c", "33.33", "50.00");
  expect_row("Top by Memory Use", "b", "50.00", "100.00");
}

// Totals are the sum of the ops (docs/cost-model.md): index constants such as
// Reshape's shape and Pad's pads are no parameters, in an op or in the totals.
TEST(Report, TotalsAreTheSumOfTheOps) {
  Graph g;
  g.source = "<reshape>";
  g.inputs.push_back({"x", {1, 2, 3, 4}});
  g.initializers["shape"] = {{2}, {1.0f, 24.0f}};
  g.initializers["pads"] = {{4}, {0.0f, 1.0f, 0.0f, 1.0f}};
  g.initializers["W"] = {{26, 5}, std::vector<float>(130, 0.5f)};
  g.nodes.push_back({"reshape", "Reshape", {"x", "shape"}, {"r"}, {}});
  g.nodes.push_back({"pad", "Pad", {"r", "pads"}, {"p"}, {}});
  g.nodes.push_back({"fc", "MatMul", {"p", "W"}, {"y"}, {}});
  g.outputs = {"y"};
  Session reshape(compile(g));
  reshape.run();
  const nlohmann::json r = profile_report(reshape, 0);
  EXPECT_EQ(r["totals"]["params"], 130);  // W alone
  EXPECT_EQ(r["totals"]["weight_bytes"], 4 * 130);

  for (const char* model : {"mobilenet_v1.json", "mobilenet_v2_1_0.json", "small_cnn.json", "digits_cnn.json",
                            "lstm.json", "deconv_decoder.json"}) {
    SCOPED_TRACE(model);
    Session s(compile(load_model(std::string(MINFER_SOURCE_DIR) + "/models/" + model)));
    s.run();
    const nlohmann::json report = profile_report(s, 0);
    int64_t params = 0, macs = 0, flops = 0, bytes_read = 0, bytes_written = 0;
    for (const nlohmann::json& op : report["ops"]) {
      params += op["params"].get<int64_t>();
      macs += op["macs"].get<int64_t>();
      flops += op["flops"].get<int64_t>();
      bytes_read += op["bytes_read"].get<int64_t>();
      bytes_written += op["bytes_written"].get<int64_t>();
    }
    const nlohmann::json& t = report["totals"];
    EXPECT_EQ(t["params"], params);
    EXPECT_EQ(t["weight_bytes"], 4 * params);
    EXPECT_EQ(t["macs"], macs);
    EXPECT_EQ(t["flops"], flops);
    EXPECT_EQ(t["bytes_read"], bytes_read);
    EXPECT_EQ(t["bytes_written"], bytes_written);
  }
}

}  // namespace
}  // namespace minfer
