// The comparison document and its text, CSV and HTML forms, on reports built from
// hand-made costs and times, so every figure and ratio is known in advance.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "profiler/compare_report.h"
#include "profiler/report.h"
#include "tests/profiler/literal_cost.h"
#include "tests/profiler/test_machine.h"

namespace minfer {
namespace {

OpRecord op(const std::string& name, const std::string& type, const std::string& kind, int64_t macs, int64_t flops,
            int64_t params, int64_t read, int64_t written, std::vector<double> ms) {
  OpRecord o;
  o.name = name;
  o.type = type;
  o.kind = kind;
  o.output_shape = {1, 8};
  o.cost = test::literal_cost({macs, flops, params, read, written});
  o.times_ms = std::move(ms);
  return o;
}

// conv -> bn -> relu, three runs: conv 2, 4, 6 ms; bn 1 ms; relu 0.25 ms.
nlohmann::json unfolded(const std::string& file = "m.json") {
  ReportInput in;
  in.model_name = "m";
  in.model_file = file;
  in.peak_activation_bytes = 4096;
  in.latency_ms = {3.5, 5.5, 7.5};
  in.ops = {op("conv", "Conv", "regular", 1000, 2000, 288, 3000, 1000, {2, 4, 6}),
            op("bn", "BatchNormalization", "", 0, 400, 32, 1000, 1000, {1, 1, 1}),
            op("relu", "Relu", "", 0, 200, 0, 1000, 1000, {0.25, 0.25, 0.25})};
  in.machine = test::test_machine();
  return build_report(in);
}

// The same model with bn folded into conv: conv+bn 2, 3, 4 ms.
nlohmann::json folded(const std::string& file = "m.json") {
  ReportInput in;
  in.model_name = "m";
  in.model_file = file;
  in.peak_activation_bytes = 2048;
  in.latency_ms = {2.5, 3.5, 4.5};
  in.ops = {op("conv+bn", "Conv", "regular", 1000, 2000, 296, 3100, 1000, {2, 3, 4}),
            op("relu", "Relu", "", 0, 200, 0, 1000, 1000, {0.25, 0.25, 0.25})};
  in.machine = test::test_machine();
  return build_report(in);
}

nlohmann::json compare(const nlohmann::json& a, const nlohmann::json& b) {
  return build_compare_report({"A", "--fold_bn 0", a}, {"B", "--fold_bn 1", b}, "interleaved");
}

const nlohmann::json& metric(const nlohmann::json& c, const std::string& key) {
  for (const auto& m : c["metrics"])
    if (m["key"] == key) return m;
  throw std::runtime_error("no metric " + key);
}

TEST(CompareReport, MetricsAndRatios) {
  const auto c = compare(unfolded(), folded());
  struct Expected {
    const char* key;
    double a, b;
  };
  for (const Expected& e : {Expected{"nodes", 3, 2},
                            {"macs", 1000, 1000},
                            {"flops", 2600, 2200},
                            {"params", 320, 296},
                            {"weight_bytes", 1280, 1184},
                            {"peak_activation_bytes", 4096, 2048},
                            {"bytes_moved", 8000, 6100},
                            {"arithmetic_intensity", 2600.0 / 8000, 2200.0 / 6100},
                            {"latency_median_ms", 5.5, 3.5},
                            {"latency_mean_ms", 5.5, 3.5},
                            {"latency_min_ms", 3.5, 2.5},
                            {"gflops_per_s", 2600 / 5.5e6, 2200 / 3.5e6}}) {
    const auto& m = metric(c, e.key);
    EXPECT_NEAR(m["a"].get<double>(), e.a, 1e-12 * e.a) << e.key;
    EXPECT_NEAR(m["b"].get<double>(), e.b, 1e-12 * e.b) << e.key;
    EXPECT_NEAR(m["ratio"].get<double>(), e.b / e.a, 1e-12) << e.key;
  }
  // Counts stay integers in the JSON; the roofline rows are there because both have a machine.
  EXPECT_TRUE(metric(c, "macs")["a"].is_number_integer());
  EXPECT_TRUE(metric(c, "bytes_moved")["b"].is_number_integer());
  EXPECT_NO_THROW(metric(c, "roofline_ms"));
  EXPECT_EQ(c["schedule"], "interleaved");
  EXPECT_EQ(c["sides"][1]["spec"], "--fold_bn 1");
  EXPECT_EQ(c["sides"][0]["report"], unfolded());
}

// Two halves of each side's runs are an A/A pair: the larger of their ratios' distances
// from 1 is the noise floor the latency ratio is read against.
TEST(CompareReport, NoiseFloorFromEachSidesHalves) {
  const auto report = [](std::vector<double> latency) {
    ReportInput in;
    in.model_name = "m";
    in.model_file = "m.json";
    in.latency_ms = std::move(latency);
    return build_report(in);
  };
  // A: runs 1-2 at 10, runs 3-4 at 11 (ratio 10 / 11), median 10.5; B: 9 throughout.
  nlohmann::json c = compare(report({10, 10, 11, 11}), report({9, 9, 9, 9}));
  EXPECT_DOUBLE_EQ(c["noise"]["a_halves_median_ratio"].get<double>(), 10.0 / 11);
  EXPECT_DOUBLE_EQ(c["noise"]["b_halves_median_ratio"].get<double>(), 1.0);
  EXPECT_NEAR(c["noise"]["floor"].get<double>(), 1.0 / 11, 1e-12);
  EXPECT_TRUE(c["noise"]["latency_ratio_beyond_floor"].get<bool>());  // 9 / 10.5 = 0.857
  EXPECT_NE(format_compare_text(c).find("Noise floor: two halves of one side's runs (an A/A pair) differ by up to "
                                        "9.1% in median latency (A 0.909, B 1.000); the median latency ratio B/A "
                                        "0.857 is beyond it."),
            std::string::npos)
      << format_compare_text(c);
  c = compare(report({10, 10, 11, 11}), report({10, 10, 10, 10}));  // 10 / 10.5 = 0.952: within 9.1%
  EXPECT_FALSE(c["noise"]["latency_ratio_beyond_floor"].get<bool>());
  EXPECT_NE(format_compare_html(c).find("is within it: no difference this run can show"), std::string::npos);
  EXPECT_TRUE(compare(unfolded(), folded())["noise"]["floor"].is_null()) << "3 runs: no halves to compare";
}

TEST(CompareReport, NoRatioAgainstZero) {
  // A is a lone Relu: no MACs, no parameters.
  ReportInput in;
  in.model_file = "r.json";
  in.ops = {op("relu", "Relu", "", 0, 200, 0, 1000, 1000, {1})};
  in.latency_ms = {1};
  const auto r = build_report(in);
  const auto z = build_compare_report({"A", "", r}, {"B", "", unfolded()}, "interleaved");
  EXPECT_TRUE(metric(z, "macs")["ratio"].is_null());
  EXPECT_TRUE(metric(z, "params")["ratio"].is_null());
  EXPECT_NEAR(metric(z, "macs")["b"].get<double>(), 1000, 0);
  // Without a machine on one side there are no roofline rows.
  EXPECT_THROW(metric(z, "roofline_ms"), std::runtime_error);
}

TEST(CompareReport, OpTypesSumEachSide) {
  const auto c = compare(unfolded(), folded());
  ASSERT_EQ(c["op_types"].size(), 3u);
  // Ordered by time over both sides: Conv (4 + 3 ms), BatchNormalization (1), Relu (0.25 + 0.25).
  const auto& conv = c["op_types"][0];
  EXPECT_EQ(conv["type"], "Conv/regular");
  EXPECT_EQ(conv["a"]["count"], 1);
  EXPECT_DOUBLE_EQ(conv["a"]["ms"].get<double>(), 4);
  EXPECT_DOUBLE_EQ(conv["b"]["ms"].get<double>(), 3);
  EXPECT_EQ(conv["b"]["bytes"], 4100);
  EXPECT_DOUBLE_EQ(conv["ms_ratio"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(conv["a"]["gflops_per_s"].get<double>(), 2000 / 4e6);
  EXPECT_DOUBLE_EQ(conv["b"]["gflops_per_s"].get<double>(), 2000 / 3e6);
  const auto& bn = c["op_types"][1];
  EXPECT_EQ(bn["type"], "BatchNormalization");
  EXPECT_EQ(bn["b"]["count"], 0);
  EXPECT_DOUBLE_EQ(bn["ms_ratio"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(bn["b"]["gflops_per_s"].get<double>(), 0);  // no time: no rate
  EXPECT_EQ(c["op_types"][2]["type"], "Relu");
}

TEST(CompareReport, NodesThatDifferOnOneModel) {
  const auto c = compare(unfolded(), folded());
  ASSERT_TRUE(c["same_model"]);
  const auto& changes = c["node_changes"];
  ASSERT_EQ(changes["groups"].size(), 1u);  // relu is unchanged
  const auto& g = changes["groups"][0];
  ASSERT_EQ(g["a"].size(), 2u);
  EXPECT_EQ(g["a"][0]["name"], "conv");
  EXPECT_EQ(g["a"][1]["name"], "bn");
  EXPECT_EQ(g["b"][0]["name"], "conv+bn");
  EXPECT_EQ(g["a_total"]["flops"], 2400);
  EXPECT_EQ(g["a_total"]["params"], 320);
  EXPECT_EQ(g["a_total"]["bytes"], 6000);
  EXPECT_DOUBLE_EQ(g["a_total"]["ms"].get<double>(), 5);
  EXPECT_EQ(g["b_total"]["bytes"], 4100);
  EXPECT_EQ(changes["a_total"], g["a_total"]);

  // A node that keeps its name but changes cost is listed; removed and added nodes too.
  nlohmann::json b = unfolded();
  b["ops"][2]["flops"] = 999;
  b["ops"].push_back(b["ops"][2]);
  b["ops"][3]["name"] = "extra";
  b["ops"].erase(1);  // bn gone
  const auto d = compare(unfolded(), b);
  const auto& groups = d["node_changes"]["groups"];
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0]["b"].size(), 0u);  // bn: only in A
  EXPECT_EQ(groups[0]["a"][0]["name"], "bn");
  EXPECT_EQ(groups[1]["a"][0]["name"], "relu");  // relu: new cost
  EXPECT_EQ(groups[1]["b"][0]["flops"], 999);
  EXPECT_EQ(groups[2]["a"].size(), 0u);  // extra: only in B
  EXPECT_EQ(groups[2]["b"][0]["name"], "extra");

  // Two different model files: no node-by-node diff.
  EXPECT_FALSE(compare(unfolded("a.json"), folded("b.json")).contains("node_changes"));
}

TEST(CompareReport, TextAndCsv) {
  const auto c = compare(unfolded(), folded());
  const std::string text = format_compare_text(c);
  for (const char* s :
       {"A: --fold_bn 0\n   m (m.json), 1 thread(s)\n", "Runs:     3 of each side after 0 warmup; interleaved\n",
        "[metric]                                         [A]               [B]     [B/A]     [A/B]\n",
        "nodes                                              3                 2     0.667     1.500\n",
        "latency median (ms)                            5.500             3.500     0.636     1.571\n",
        "conv (Conv/regular) + bn (BatchNormalization) -> conv+bn (Conv/regular)\n"
        "    A: MACs 1,000, FLOPs 2,400, params 320, bytes 6,000, 5.000 ms\n"
        "    B: MACs 1,000, FLOPs 2,000, params 296, bytes 4,100, 3.000 ms\n",
        "1 group(s) of nodes differ; together\n"})
    EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text;
  const std::string csv = format_compare_csv(c);
  EXPECT_EQ(csv.rfind("metric,name,a,b,ratio\nnodes,nodes,3,2,0.666666667\nmacs,MACs,1000,1000,1\n", 0), 0u) << csv;
  EXPECT_NE(csv.find("bytes_moved,bytes moved (read + written),8000,6100,0.7625\n"), std::string::npos) << csv;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(CompareHtml, TableChartsAndBothReports) {
  const auto c = compare(unfolded(), folded());
  const std::string html = format_compare_html(c);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* s :
       {"<section id=\"compare\">", "<section id=\"compare-ratios\">", "<section id=\"compare-op-types\">",
        "<section id=\"compare-nodes\">", "<section id=\"a-summary\">", "<section id=\"b-summary\">",
        "<section id=\"a-roofline\">", "<section id=\"b-memory\">", "<h2>B: Roofline</h2>", "id=\"a-op-time-chart\"",
        "id=\"b-roofline-chart\"", "id=\"a-roof\"",
        "<title>minfer compare: A: m (--fold_bn 0) against B: m (--fold_bn 1)</title>",
        "<tr><th>nodes</th><td>3</td><td>2</td><td>0.667</td><td>1.500</td></tr>"})
    EXPECT_NE(html.find(s), std::string::npos) << s;
  // Every metric with a ratio has a bar; every op type a bar per side; each side its op bars.
  size_t with_ratio = 0;
  for (const auto& m : c["metrics"]) with_ratio += !m["ratio"].is_null() && m["ratio"].get<double>() > 0;
  EXPECT_EQ(count(html, "<rect class=\"ratio-bar\""), with_ratio);
  EXPECT_EQ(count(html, "<rect class=\"type-bar\""), 2 * c["op_types"].size());
  EXPECT_EQ(count(html, "class=\"op-bar\""), 3u + 2u);
  // Ids are unique across the two reports.
  const std::regex id(" id=\"([^\"]*)\"");
  std::set<std::string> ids;
  for (std::sregex_iterator it(html.begin(), html.end(), id), end; it != end; ++it)
    EXPECT_TRUE(ids.insert((*it)[1]).second) << "duplicate id " << (*it)[1];
  EXPECT_GT(ids.size(), 20u);
  for (const char* s : {"<script", "<link", "src=", "@import", "url(", "https:"})
    EXPECT_EQ(html.find(s), std::string::npos) << s;
}

TEST(CompareHtml, RendersTheNumbersOfTheJson) {
  auto c = compare(unfolded(), folded());
  c["metrics"][1]["a"] = 123456789;
  c["metrics"][1]["ratio"] = 0.125;
  c["op_types"][0]["b"]["ms"] = 77.125;
  const std::string html = format_compare_html(c);
  for (const char* s : {"<td>123,456,789</td>", "<td>0.125</td><td>8.000</td>", "77.125 ms", ">0.125</text>"})
    EXPECT_NE(html.find(s), std::string::npos) << s;
}

}  // namespace
}  // namespace minfer
