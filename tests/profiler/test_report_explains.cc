// A profile that explains itself: each op's cost formulas, each pass in one line, each
// op type's shares, medians beside means, init and unprofiled timings.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <stdexcept>

#include "engine/engine.h"
#include "profiler/report.h"
#include "profiler/report_html.h"
#include "tests/profiler/literal_cost.h"
#include "tests/profiler/test_machine.h"

namespace minfer {
namespace {

// The value of a plain integer expression (digits, + - * /, parentheses, spaces), by
// recursive descent; anything else, an inexact division or a 64-bit overflow throws.
class Arithmetic {
 public:
  static int64_t evaluate(const std::string& text) {
    Arithmetic a(text);
    const int64_t v = a.level(0);
    a.skip_spaces();
    if (a.at_ != text.size()) a.fail("unexpected character");
    return v;
  }

 private:
  explicit Arithmetic(const std::string& text) : text_(text) {}

  [[noreturn]] void fail(const char* what) const {
    throw std::invalid_argument(fmt::format("{} at {} of '{}'", what, at_, text_));
  }
  void skip_spaces() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
  }
  bool take(char c) {
    skip_spaces();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  // Operators of one precedence level (0: + and -, 1: * and /), left to right.
  int64_t level(int precedence) {
    if (precedence == 2) return factor();
    int64_t v = level(precedence + 1);
    const std::string operators = precedence == 0 ? "+-" : "*/";
    for (;;) {
      skip_spaces();
      if (at_ >= text_.size() || operators.find(text_[at_]) == std::string::npos) return v;
      const char op = text_[at_++];
      const int64_t r = level(precedence + 1);
      bool ok = true;
      if (op == '+') ok = !__builtin_add_overflow(v, r, &v);
      if (op == '-') ok = !__builtin_sub_overflow(v, r, &v);
      if (op == '*') ok = !__builtin_mul_overflow(v, r, &v);
      if (op == '/') {
        ok = r != 0 && v % r == 0;
        if (ok) v /= r;
      }
      if (!ok) fail("overflow or inexact division");
    }
  }
  int64_t factor() {
    if (take('(')) {
      const int64_t v = level(0);
      if (!take(')')) fail("missing ')'");
      return v;
    }
    if (take('-')) return -factor();
    skip_spaces();
    if (at_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[at_]))) fail("expected a number");
    int64_t v = 0;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_])))
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[at_++] - '0', &v)) fail("overflow");
    return v;
  }

  const std::string& text_;
  size_t at_ = 0;
};

TEST(ReportExplains, TheEvaluatorIsArithmetic) {
  EXPECT_EQ(Arithmetic::evaluate("3*3*64"), 576);
  EXPECT_EQ(Arithmetic::evaluate("2*(3 + 4)*5 - 6/2"), 67);
  EXPECT_EQ(Arithmetic::evaluate("(-2)*3"), -6);
  for (const char* bad : {"3*", "2+x", "7/2", "(1+2", "1 2", "99999999999*99999999999", "sqrt(4)"})
    EXPECT_THROW(Arithmetic::evaluate(bad), std::invalid_argument) << bad;
}

std::vector<std::string> bundled_models() {
  std::vector<std::string> files;
  for (const char* dir : {"/models", "/models/seed"})
    for (const auto& entry : std::filesystem::directory_iterator(std::string(MINFER_SOURCE_DIR) + dir))
      if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// Every op of every bundled model: its formula with its numbers evaluates to its count.
TEST(ReportExplains, EveryOpsSubstitutedFormulaIsItsCount) {
  const std::vector<std::string> models = bundled_models();
  ASSERT_GE(models.size(), 12u);  // 7 models and 5 seed examples
  for (const std::string& path : models) {
    SCOPED_TRACE(path);
    Session s(compile_file(path));
    const nlohmann::json r = profile_report(s, 0);
    int64_t formulas = 0;
    for (const nlohmann::json& op : r["ops"]) {
      SCOPED_TRACE(op["name"].get<std::string>());
      for (const char* key : {"macs", "flops"}) {
        const nlohmann::json& f = op["cost_formula"][key];
        EXPECT_FALSE(f["symbolic"].get<std::string>().empty());
        EXPECT_EQ(Arithmetic::evaluate(f["substituted"]), op[key].get<int64_t>()) << f["substituted"];
        EXPECT_EQ(f["value"], op[key]);
        formulas += f["symbolic"] != f["substituted"];
      }
    }
    if (r["totals"]["macs"].get<int64_t>() > 0) {
      EXPECT_GT(formulas, 0) << "no formula names a factor";
    }
  }
}

TEST(ReportExplains, ExplainShowsTheFormulas) {
  ReportInput in;
  in.model_name = "m";
  in.model_file = "m.json";
  in.latency_ms = {1.0};
  OpCost c = test::literal_cost({0, 0, 0, 16, 16});
  c.macs_formula = CostExpr::of("K", 3) * CostExpr::of("C", 64);
  c.flops_formula = CostExpr(2) * c.macs_formula + CostExpr::of("C", 64);
  c.macs = 192;
  c.flops = 448;
  in.ops.push_back({"conv", "Conv", "regular", {64}, c, {1.0}});
  const nlohmann::json r = build_report(in);
  EXPECT_EQ(r["ops"][0]["cost_formula"]["flops"]["substituted"], "2*3*64 + 64");
  const std::string explained = format_text(r, {.explain = true});
  EXPECT_NE(explained.find("conv (Conv/regular)\n"
                           "  MACs   K*C = 3*64 = 192\n"
                           "  FLOPs  2*K*C + C = 2*3*64 + 64 = 448\n"),
            std::string::npos)
      << explained;
  EXPECT_EQ(format_text(r).find("Cost formulas"), std::string::npos);
  EXPECT_NE(format_html(r).find("title=\"2*K*C + C = 2*3*64 + 64\">448</td>"), std::string::npos);
  // Counts that disagree with their formulas are a defect of the op's cost code.
  in.ops[0].cost.macs = 191;
  EXPECT_THROW(build_report(in), std::logic_error);
}

// Two fold_bn actions (the second folding two BatchNormalizations into one Conv), one
// kept, and a removal: counts by op type, and changes summed over the actions.
TEST(ReportExplains, PassesSummedInOneLineEach) {
  ReportInput in;
  in.model_name = "m";
  in.model_file = "m.json";
  in.latency_ms = {1.0};
  in.passes_run = {"clean", "fold_bn", "fuse"};
  auto record = [](std::string pass, std::string action, std::vector<std::string> nodes, std::string result,
                   Cost before, Cost after, std::string op_type) {
    return PassRecord{pass, action, nodes, result, "", before, after, -1, op_type};
  };
  in.passes = {
      record("fold_bn", "folded", {"c1", "bn1"}, "c1+bn1", {100, 260, 40, 4000, 2000}, {100, 200, 36, 2000, 1000},
             "BatchNormalization"),
      record("fold_bn", "folded", {"c2", "bn2", "bn3"}, "c2+bn2+bn3", {10, 40, 20, 1500, 600}, {10, 20, 12, 500, 200},
             "BatchNormalization"),
      record("fold_bn", "kept", {"bn4"}, "bn4", {0, 8, 8, 64, 32}, {0, 8, 8, 64, 32}, "BatchNormalization"),
      record("clean", "removed", {"id"}, "", {0, 0, 0, 16, 16}, {}, "Identity"),
  };
  const nlohmann::json r = build_report(in);
  const nlohmann::json& by_pass = r["passes"]["by_pass"];
  ASSERT_EQ(by_pass.size(), 3u);
  const nlohmann::json& fold = by_pass[1];
  EXPECT_EQ(fold["actions"], 3);
  EXPECT_EQ(fold["counts"][0], (nlohmann::json{{"action", "folded"}, {"op_type", "BatchNormalization"}, {"nodes", 3}}));
  EXPECT_EQ(fold["counts"][1], (nlohmann::json{{"action", "kept"}, {"op_type", "BatchNormalization"}, {"nodes", 1}}));
  // (200 - 260) + (20 - 40) FLOPs; (36 - 40) + (12 - 20) params; (3000 - 6000) + (700 - 2100) bytes.
  EXPECT_EQ(fold["change"], (nlohmann::json{{"macs", 0}, {"flops", -80}, {"params", -12}, {"bytes", -4400}}));
  const std::string text = format_text(r);
  EXPECT_NE(text.find("clean: 1 Identity removed: -32B moved\n"
                      "fold_bn: 3 BatchNormalizations folded, 1 BatchNormalization kept: -80 FLOPs, -12 parameters, "
                      "-4.40 KB moved\n"
                      "fuse: nothing to do: no change of cost\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("before: "), std::string::npos);  // the actions only with --verbose
  const std::string verbose = format_text(r, {.verbose = true});
  EXPECT_NE(verbose.find("fold_bn: folded c2 + bn2 + bn3 -> c2+bn2+bn3\n    before: MACs 10, FLOPs 40"),
            std::string::npos)
      << verbose;
}

// MobileNet V1's passes: each pass's change is the sum of its actions' changes, and the
// passes' changes add up to the model's cost after the passes minus before.
TEST(ReportExplains, MobileNetPassChangesAreSumsOfTheirActions) {
  Session s(compile_file(std::string(MINFER_SOURCE_DIR) + "/models/mobilenet_v1.json"));
  const nlohmann::json r = profile_report(s, 0);
  const nlohmann::json& passes = r["passes"];
  std::map<std::string, int64_t> model_change;
  for (const nlohmann::json& p : passes["by_pass"]) {
    SCOPED_TRACE(p["pass"].get<std::string>());
    std::map<std::string, int64_t> sum;
    for (const nlohmann::json& a : passes["actions"]) {
      if (a["pass"] != p["pass"]) continue;
      for (const char* key : {"macs", "flops", "params"})
        sum[key] += a["cost_after"][key].get<int64_t>() - a["cost_before"][key].get<int64_t>();
      for (const char* key : {"bytes_read", "bytes_written"})
        sum["bytes"] += a["cost_after"][key].get<int64_t>() - a["cost_before"][key].get<int64_t>();
    }
    for (const auto& [key, value] : sum) {
      EXPECT_EQ(p["change"][key], value) << key;
      model_change[key] += value;
    }
  }
  for (const char* key : {"macs", "flops", "params"})
    EXPECT_EQ(model_change[key], passes["cost_after"][key].get<int64_t>() - passes["cost_before"][key].get<int64_t>())
        << key;
  const nlohmann::json& fold = passes["by_pass"][2];  // after eliminate_identities and eliminate_dead_nodes
  ASSERT_EQ(fold["pass"], "fold_bn");
  EXPECT_EQ(fold["counts"][0]["nodes"], 27);  // every BatchNormalization, each after a Conv
  EXPECT_NE(
      format_text(r).find(fmt::format("fold_bn: 27 BatchNormalizations folded: {} FLOPs, {} parameters, ",
                                      with_commas(fold["change"]["flops"]), with_commas(fold["change"]["params"]))),
      std::string::npos);
}

// conv: 100 MACs, 56 bytes, 2 ms (mean of 3 and 1); relu: 0 MACs, 32 bytes, 1 ms.
TEST(ReportExplains, OpTypeSharesOfTimeMacsAndBytes) {
  ReportInput in;
  in.model_name = "m";
  in.model_file = "m.json";
  in.latency_ms = {4.0, 2.0};
  in.ops.push_back({"conv", "Conv", "regular", {1, 4}, test::literal_cost({100, 200, 10, 40, 16}), {3.0, 1.0}});
  in.ops.push_back({"relu1", "Relu", "", {1, 4}, test::literal_cost({0, 4, 0, 16, 16}), {0.5, 0.5}});
  in.ops.push_back({"relu2", "Relu", "", {1, 4}, test::literal_cost({0, 4, 0, 16, 16}), {0.5, 0.5}});
  const nlohmann::json r = build_report(in);
  const nlohmann::json& types = r["op_types"];
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0]["type"], "Conv/regular");
  EXPECT_DOUBLE_EQ(types[0]["time_percent"].get<double>(), 200.0 / 3);
  EXPECT_DOUBLE_EQ(types[0]["macs_percent"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(types[0]["bytes_percent"].get<double>(), 100.0 * 56 / 120);
  EXPECT_EQ(types[1]["type"], "Relu");
  EXPECT_EQ(types[1]["count"], 2);
  EXPECT_DOUBLE_EQ(types[1]["time_percent"].get<double>(), 100.0 / 3);
  EXPECT_DOUBLE_EQ(types[1]["macs_percent"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(types[1]["bytes_percent"].get<double>(), 100.0 * 64 / 120);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("[%MACs] [%bytes]"), std::string::npos) << text;
  EXPECT_NE(text.find("Conv/regular       1     2.000   66.67%   66.67%  100.00%   46.67%"), std::string::npos) << text;
}

TEST(ReportExplains, SharesOfARealModelSumTo100) {
  Session s(compile_file(std::string(MINFER_SOURCE_DIR) + "/models/mobilenet_v2_1_0.json"));
  s.run();
  const nlohmann::json r = profile_report(s, 0);
  for (const char* key : {"time_percent", "macs_percent", "bytes_percent"}) {
    double sum = 0;
    for (const nlohmann::json& t : r["op_types"]) sum += t[key].get<double>();
    EXPECT_NEAR(sum, 100.0, 1e-9) << key;
  }
}

// Three runs of 1, 2 and 9 ms: mean 4, median 2. Throughput and the roofline use 2 ms.
TEST(ReportExplains, AttainedFiguresComeFromTheMedian) {
  ReportInput in;
  in.model_name = "m";
  in.model_file = "m.json";
  in.latency_ms = {1.0, 2.0, 9.0};
  in.machine = test::test_machine();  // 100 GFLOP/s, 10 GB/s
  in.ops.push_back(
      {"gemm", "Gemm", "", {4}, test::literal_cost({1'000'000, 2'000'000, 0, 1000, 1000}), {1.0, 9.0, 2.0}});
  const nlohmann::json r = build_report(in);
  const nlohmann::json& op = r["ops"][0];
  EXPECT_EQ(op["time_ms"]["mean"], 4.0);
  EXPECT_EQ(op["time_ms"]["median"], 2.0);
  EXPECT_DOUBLE_EQ(op["gflops_per_s"].get<double>(), 1.0);              // 2e6 FLOPs in 2 ms
  EXPECT_DOUBLE_EQ(op["roofline_fraction"].get<double>(), 0.02 / 2.0);  // 2e6 / 100e9 s = 0.02 ms
  EXPECT_DOUBLE_EQ(r["totals"]["roofline_fraction"].get<double>(), 0.02 / 2.0);
  EXPECT_DOUBLE_EQ(r["totals"]["gflops_per_s"].get<double>(), 1.0);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("[avg ms]  [median]"), std::string::npos) << text;
  EXPECT_NE(text.find("    4.000     2.000 100.00%"), std::string::npos) << text;
  EXPECT_NE(format_html(r).find("<td>4.000</td><td>2.000</td>"), std::string::npos);
}

TEST(ReportExplains, InitAndUnprofiledTimes) {
  ReportInput in;
  in.model_name = "m";
  in.model_file = "m.json";
  in.latency_ms = {2.0, 3.0};
  in.latency_unprofiled_ms = {1.0, 1.5, 5.0};
  in.load_ms = 12.5;
  in.compile_ms = 40.25;
  const nlohmann::json r = build_report(in);
  EXPECT_EQ(r["init_ms"], (nlohmann::json{{"load", 12.5}, {"compile", 40.25}}));
  EXPECT_EQ(r["unprofiled_runs"], 3);
  EXPECT_EQ(r["latency_ms_unprofiled"]["median"], 1.5);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("Init (ms): load=12.500 compile=40.250\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Without per-op timing (ms): count=3 first=1.000 min=1.000 median=1.500 mean=2.500"),
            std::string::npos)
      << text;

  // The engine's own: a file's load and compile are both timed; a graph built in memory
  // was not loaded.
  Session s(compile_file(std::string(MINFER_SOURCE_DIR) + "/models/small_cnn.json"));
  const nlohmann::json real = profile_report(s, 0);
  EXPECT_GT(real["init_ms"]["load"].get<double>(), 0.0);
  EXPECT_GT(real["init_ms"]["compile"].get<double>(), 0.0);
  Session memory(compile(load_model(std::string(MINFER_SOURCE_DIR) + "/models/small_cnn.json")));
  EXPECT_EQ(profile_report(memory, 0)["init_ms"]["load"], 0.0);
  EXPECT_GT(profile_report(memory, 0)["init_ms"]["compile"].get<double>(), 0.0);
}

// The busy-machine warning's two criteria (docs/profiling.md), each alone, and the
// two halves of the runs (an A/A pair), by hand.
TEST(ReportExplains, BusyMachineIsWarnedAbout) {
  ReportInput in;
  in.model_name = "m";
  in.model_file = "m.json";
  in.latency_ms = {10.0, 10.0, 10.0, 10.0, 10.0, 12.0};  // mean 10.33, 3.3% above the median
  in.load_average = 1.5;
  in.logical_cpus = 2;
  nlohmann::json r = build_report(in);
  EXPECT_FALSE(r["stability"]["busy"].get<bool>());
  EXPECT_EQ(r["stability"]["reasons"].size(), 0u);
  // Runs 1-2 and 5-6 (10, 10, 10, 12: median 10) over runs 3-4 (10, 10).
  EXPECT_DOUBLE_EQ(r["stability"]["halves_median_ratio"].get<double>(), 1.0);
  std::string text = format_text(r);
  EXPECT_NE(text.find("Stability: load average 1.50 on 2 logical CPUs; mean/median latency 1.033"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("WARNING"), std::string::npos);

  in.load_average = 2.5;  // more runnable threads than CPUs
  r = build_report(in);
  EXPECT_TRUE(r["stability"]["busy"].get<bool>());
  EXPECT_EQ(r["stability"]["reasons"], nlohmann::json({"load average 2.50 on 2 logical CPUs"}));
  EXPECT_NE(format_text(r).find("WARNING: the machine was busy during the runs (load average 2.50 on 2 logical CPUs)"),
            std::string::npos);
  EXPECT_NE(format_html(r).find("<td class=\"warning\">the machine was busy"), std::string::npos);

  in.load_average = -1;                                  // unknown
  in.latency_ms = {10.0, 10.0, 12.0, 12.0, 10.0, 40.0};  // mean 15.67, 42% above the median 11
  r = build_report(in);
  EXPECT_EQ(r["stability"]["load_average"], nullptr);
  EXPECT_EQ(r["stability"]["reasons"], nlohmann::json({"mean latency 42% above the median"}));
  EXPECT_DOUBLE_EQ(r["stability"]["halves_median_ratio"].get<double>(), 10.0 / 12.0);  // 10, 10, 10, 40 / 12, 12
  in.latency_ms = {10.0, 10.0, 10.0, 40.0};  // as far apart, but under 5 runs the spread says nothing
  EXPECT_FALSE(build_report(in)["stability"]["busy"].get<bool>());
}

TEST(ReportExplains, SeparablePairsHaveTheTimeOfEachPartAndATotal) {
  ReportInput in;
  in.model_name = "m";
  in.model_file = "m.json";
  in.latency_ms = {3.0};
  in.ops.push_back({"dw", "Conv", "depthwise", {1}, test::literal_cost({7'225'344, 0, 0, 0, 0}), {1.0, 2.0}});
  in.ops.push_back({"pw", "Conv", "pointwise", {1}, test::literal_cost({102'760'448, 0, 0, 0, 0}), {0.5}});
  in.separable_pairs.push_back({"dw", "pw", {}, {3, 3}, 64, 128, 7'225'344, 102'760'448, 924'844'032});
  in.separable_pairs.push_back({"dw", "pw", {}, {3, 3}, 64, 128, 7'225'344, 102'760'448, 924'844'032});
  const nlohmann::json r = build_report(in);
  EXPECT_EQ(r["separable_pairs"][0]["depthwise_ms"], 1.5);  // the mean
  EXPECT_EQ(r["separable_pairs"][0]["pointwise_ms"], 0.5);
  const nlohmann::json& total = r["separable_pairs_total"];
  EXPECT_EQ(total["separable_macs"], 2 * 109'985'792);
  EXPECT_EQ(total["regular_macs"], 2 * 924'844'032);
  EXPECT_DOUBLE_EQ(total["ratio"].get<double>(), 924'844'032.0 / 109'985'792);
  EXPECT_EQ(total["depthwise_ms"], 3.0);
  EXPECT_EQ(total["pointwise_ms"], 1.0);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("    14,450,688    205,520,896    219,971,584  1,849,688,064    8.41x                            "
                      "3.000    1.000  total of 2 pair(s)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace minfer
