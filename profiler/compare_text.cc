// Text and CSV rendering of a comparison (build_compare_report's document).
#include <fmt/format.h>

#include "profiler/compare_report.h"
#include "profiler/report.h"

namespace minfer {

using nlohmann::json;

namespace {

std::string banner(const std::string& title) {
  return fmt::format("============================== {} ==============================\n", title);
}

// Counts with commas, measured or derived figures with three decimals.
std::string value_text(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_number_integer()) return with_commas(v.get<int64_t>());
  return fmt::format("{:.3f}", v.get<double>());
}

std::string inverse_text(const json& ratio) {
  return ratio.is_null() || ratio.get<double>() == 0 ? "-" : fmt::format("{:.3f}", 1.0 / ratio.get<double>());
}

std::string side_line(const json& side) {
  const json& r = side["report"];
  const std::string& spec = side["spec"].get_ref<const std::string&>();
  return fmt::format("{}: {}\n   {} ({}), {} thread(s)\n", side["label"].get<std::string>(),
                     spec.empty() ? "(the run-wide flags only)" : spec, r["model"]["name"].get<std::string>(),
                     r["model"]["file"].get<std::string>(), r["threads"].get<int>());
}

void metric_table(std::string& out, const json& metrics) {
  out += fmt::format("{:<34} {:>17} {:>17} {:>9} {:>9}\n", "[metric]", "[A]", "[B]", "[B/A]", "[A/B]");
  for (const json& m : metrics)
    out += fmt::format("{:<34} {:>17} {:>17} {:>9} {:>9}\n", m["name"].get<std::string>(), value_text(m["a"]),
                       value_text(m["b"]), value_text(m["ratio"]), inverse_text(m["ratio"]));
}

void op_type_table(std::string& out, const json& rows) {
  out += fmt::format("{:>24} {:>5} {:>5} {:>14} {:>14} {:>14} {:>14} {:>9} {:>9} {:>7} {:>11} {:>11}\n", "[node type]",
                     "[#A]", "[#B]", "[MACs A]", "[MACs B]", "[bytes A]", "[bytes B]", "[ms A]", "[ms B]", "[B/A]",
                     "[GFLOP/s A]", "[GFLOP/s B]");
  for (const json& t : rows) {
    const json &a = t["a"], &b = t["b"];
    out += fmt::format("{:>24} {:>5} {:>5} {:>14} {:>14} {:>14} {:>14} {:>9.3f} {:>9.3f} {:>7} {:>11.2f} {:>11.2f}\n",
                       t["type"].get<std::string>(), a["count"].get<int64_t>(), b["count"].get<int64_t>(),
                       with_commas(a["macs"]), with_commas(b["macs"]), with_commas(a["bytes"]), with_commas(b["bytes"]),
                       a["ms"].get<double>(), b["ms"].get<double>(),
                       t["ms_ratio"].is_null() ? "-" : fmt::format("{:.3f}", t["ms_ratio"].get<double>()),
                       a["gflops_per_s"].get<double>(), b["gflops_per_s"].get<double>());
  }
}

std::string ops_text(const json& ops) {
  if (ops.empty()) return "(nothing)";
  std::string s;
  for (const json& o : ops)
    s += fmt::format("{}{} ({})", s.empty() ? "" : " + ", o["name"].get<std::string>(), o["type"].get<std::string>());
  return s;
}

std::string sum_text(const json& s) {
  return fmt::format("MACs {}, FLOPs {}, params {}, bytes {}, {:.3f} ms", with_commas(s["macs"]),
                     with_commas(s["flops"]), with_commas(s["params"]), with_commas(s["bytes"]), s["ms"].get<double>());
}

void node_change_list(std::string& out, const json& changes) {
  const json& groups = changes["groups"];
  if (groups.empty()) {
    out += "None: both sides run the same nodes at the same cost.\n";
    return;
  }
  for (const json& g : groups)
    out += fmt::format("{} -> {}\n    A: {}\n    B: {}\n", ops_text(g["a"]), ops_text(g["b"]), sum_text(g["a_total"]),
                       sum_text(g["b_total"]));
  out += fmt::format("{} group(s) of nodes differ; together\n    A: {}\n    B: {}\n", groups.size(),
                     sum_text(changes["a_total"]), sum_text(changes["b_total"]));
}

// RFC 4180 quoting for metric names.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_number(const json& v) {
  if (v.is_null()) return "";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return fmt::format("{:.9g}", v.get<double>());
}

}  // namespace

std::string noise_text(const json& c) {
  const json& n = c["noise"];
  if (n["floor"].is_null()) return "Noise floor: unknown (fewer than 4 runs of a side).";
  const json& latency = *std::find_if(c["metrics"].begin(), c["metrics"].end(),
                                      [](const json& m) { return m["key"] == "latency_median_ms"; });
  return fmt::format(
      "Noise floor: two halves of one side's runs (an A/A pair) differ by up to {:.1f}% in median latency "
      "(A {:.3f}, B {:.3f}); the median latency ratio B/A {} is {}.",
      100.0 * n["floor"].get<double>(), n["a_halves_median_ratio"].get<double>(),
      n["b_halves_median_ratio"].get<double>(), value_text(latency["ratio"]),
      n["latency_ratio_beyond_floor"].get<bool>() ? "beyond it" : "within it: no difference this run can show");
}

std::string format_compare_text(const json& c) {
  std::string out = banner("Compare");
  for (const json& side : c["sides"]) out += side_line(side);
  const json& a = c["sides"][0]["report"];
  out += fmt::format("Runs:     {} of each side after {} warmup; {}\n\n", a["runs"].get<int64_t>(),
                     a["warmup_runs"].get<int>(), c["schedule"].get<std::string>());
  metric_table(out, c["metrics"]);
  out += "\n" + noise_text(c) + "\n";
  out += "\n" + banner("By op type (mean ms per run)");
  op_type_table(out, c["op_types"]);
  if (c.contains("node_changes")) {
    out += "\n" + banner("Nodes that differ (A -> B)");
    node_change_list(out, c["node_changes"]);
  }
  return out;
}

std::string format_compare_csv(const json& c) {
  std::string out = "metric,name,a,b,ratio\n";
  for (const json& m : c["metrics"])
    out += fmt::format("{},{},{},{},{}\n", m["key"].get<std::string>(), csv_field(m["name"]), csv_number(m["a"]),
                       csv_number(m["b"]), csv_number(m["ratio"]));
  return out;
}

}  // namespace minfer
