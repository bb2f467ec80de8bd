// The report joins costs and times correctly, and every format renders the same numbers.
#include <gtest/gtest.h>

#include "profiler/report.h"

namespace minfer {
namespace {

ReportInput two_ops() {
  ReportInput in;
  in.model_name = "m";
  in.model_file = "m.json";
  in.inputs = {{"x", {1, 4}}};
  in.outputs = {{"y", {1, 4}}};
  in.params = 10;
  in.peak_activation_bytes = 128;
  in.latency_ms = {4.0, 2.0};
  in.ops.push_back({"conv", "Conv", "regular", {1, 4}, {100, 200, 10, 40, 16}, {3.0, 1.0}});
  in.ops.push_back({"relu", "Relu", "", {1, 4}, {0, 4, 0, 16, 16}, {1.0, 1.0}});
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
  const auto& conv = r["ops"][0];
  EXPECT_EQ(conv["time_ms"]["mean"], 2.0);
  EXPECT_DOUBLE_EQ(conv["percent"].get<double>(), 200.0 / 3.0);  // 2 ms of 3 ms summed op time
  EXPECT_DOUBLE_EQ(conv["gflops_per_s"].get<double>(), 200 / (2.0 * 1e6));
  EXPECT_DOUBLE_EQ(r["ops"][1]["start_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(r["ops"][1]["cdf_percent"].get<double>(), 100.0);
  for (const char* key : {"model", "threads", "runs", "totals", "latency_ms", "ops"}) EXPECT_TRUE(r.contains(key)) << key;
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

}  // namespace
}  // namespace minfer
