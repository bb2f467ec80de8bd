// The HTML compare view (engine_bench --compare A B --html FILE): the side-by-side table
// with a chart of the ratios B/A, time by op type for both sides, the nodes that differ,
// then each side's own report sections. Rendered from the comparison's JSON only.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "profiler/compare_report.h"
#include "profiler/report.h"
#include "profiler/report_charts.h"
#include "profiler/report_html.h"

namespace minfer {

using nlohmann::json;

namespace {

constexpr const char* kColourA = "#4e79a7";
constexpr const char* kColourB = "#f28e2b";

std::string value_html(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_number_integer()) return with_commas(v.get<int64_t>());
  return fmt::format("{:.3f}", v.get<double>());
}

// "A: mobilenet_v1 (--fold_bn 0)": the side's settings when it has any beyond a model file.
std::string side_title(const json& side) {
  const std::string& spec = side["spec"].get_ref<const std::string&>();
  const json& model = side["report"]["model"];
  const bool settings = !spec.empty() && spec != model["file"];
  return fmt::format("{}: {}{}", side["label"].get<std::string>(), model["name"].get<std::string>(),
                     settings ? " (" + spec + ")" : "");
}

std::string legend() {
  return fmt::format(
      "<div class=\"legend\"><span><i style=\"background:{}\"></i>A</span><span><i "
      "style=\"background:{}\"></i>B</span></div>\n",
      kColourA, kColourB);
}

std::string svg_text(double x, double y, const std::string& s, const std::string& attrs = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" {}>{}</text>\n", x, y, attrs, escape_html(s));
}

// Each metric's B/A as a bar from 1 on a log axis: left of 1, B has less of it.
std::string ratio_chart(const json& metrics) {
  std::vector<const json*> rows;
  double extent = 2;  // the axis spans [1/extent, extent], at least a factor of 2 each way
  for (const json& m : metrics) {
    if (m["ratio"].is_null() || m["ratio"].get<double>() <= 0) continue;
    rows.push_back(&m);
    const double r = m["ratio"].get<double>();
    extent = std::max(extent, std::max(r, 1 / r));
  }
  extent = std::pow(2.0, std::ceil(std::log2(extent)));
  constexpr int kWidth = 980, kLabel = 280, kArea = 560, kRow = 20, kTop = 30;
  const int height = kTop + kRow * static_cast<int>(rows.size()) + 10;
  auto x = [&](double r) { return kLabel + kArea * (std::log2(r) / std::log2(extent) + 1) / 2; };
  std::string svg = fmt::format(
      "<svg id=\"compare-ratio-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 "
      "{} {}\" role=\"img\" aria-label=\"B/A of each figure, on a log axis\">\n",
      kWidth, height, kWidth, height);
  for (double t = 1 / extent; t <= extent * 1.001; t *= extent >= 64 ? 4 : 2) {
    svg += fmt::format("<line class=\"{}\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\"/>\n",
                       t == 1 ? "axis-line" : "grid", x(t), kTop - 6, x(t), height - 10);
    svg += svg_text(x(t), kTop - 10, t >= 1 ? fmt::format("{:g}x", t) : fmt::format("1/{:g}", 1 / t),
                    "text-anchor=\"middle\"");
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& m = *rows[i];
    const double r = m["ratio"].get<double>(), y = kTop + kRow * static_cast<double>(i);
    const double x0 = std::min(x(1), x(r)), x1 = std::max(x(1), x(r));
    svg += svg_text(kLabel - 6, y + kRow - 6, m["name"].get<std::string>(), "text-anchor=\"end\"");
    svg += fmt::format(
        "<rect class=\"ratio-bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\">"
        "<title>{}</title></rect>\n",
        x0, y + 3, std::max(x1 - x0, 1.0), kRow - 6, r < 1 ? kColourA : kColourB,
        escape_html(fmt::format("{}: A {}, B {}, B/A {:.3f}", m["name"].get<std::string>(), value_html(m["a"]),
                                value_html(m["b"]), r)));
    svg += svg_text(x1 + 4, y + kRow - 6, fmt::format("{:.3f}", r));
  }
  return svg + "</svg>\n";
}

std::string metric_table(const json& metrics) {
  std::string out = "<table class=\"compare\">\n<tr><th>figure</th><th>A</th><th>B</th><th>B/A</th><th>A/B</th></tr>\n";
  for (const json& m : metrics) {
    const json& r = m["ratio"];
    out += fmt::format("<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       escape_html(m["name"].get<std::string>()), value_html(m["a"]), value_html(m["b"]), value_html(r),
                       r.is_null() || r.get<double>() == 0 ? "-" : fmt::format("{:.3f}", 1 / r.get<double>()));
  }
  return out + "</table>\n";
}

// Two bars per op type, A's and B's mean time.
std::string op_type_chart(const json& types) {
  constexpr int kWidth = 980, kLabel = 260, kArea = 560, kBar = 10, kTop = 28;
  const int group = 2 * kBar + 8;
  const int height = kTop + group * static_cast<int>(types.size()) + 10;
  double max_ms = 0;
  for (const json& t : types) max_ms = std::max({max_ms, t["a"]["ms"].get<double>(), t["b"]["ms"].get<double>()});
  const double scale = max_ms > 0 ? kArea / max_ms : 0;
  std::string svg = fmt::format(
      "<svg id=\"compare-op-type-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 "
      "0 {} {}\" role=\"img\" aria-label=\"Mean time per run of each op type, A against B\">\n",
      kWidth, height, kWidth, height);
  svg += svg_text(kLabel, kTop - 10, fmt::format("ms per run (longest {:.3f} ms)", max_ms));
  for (size_t i = 0; i < types.size(); ++i) {
    const json& t = types[i];
    const double y = kTop + group * static_cast<double>(i);
    svg += svg_text(kLabel - 6, y + kBar + 4, t["type"].get<std::string>(), "text-anchor=\"end\"");
    for (int s = 0; s < 2; ++s) {
      const json& side = t[s == 0 ? "a" : "b"];
      const double ms = side["ms"].get<double>(), top = y + s * kBar;
      svg += fmt::format(
          "<rect class=\"type-bar\" x=\"{}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\">"
          "<title>{}</title></rect>\n",
          kLabel, top, std::max(ms * scale, 0.5), kBar - 1, s == 0 ? kColourA : kColourB,
          escape_html(fmt::format("{} in {}: {} op(s), {:.3f} ms, {} MACs", t["type"].get<std::string>(),
                                  s == 0 ? "A" : "B", side["count"].get<int64_t>(), ms, with_commas(side["macs"]))));
      svg += svg_text(kLabel + ms * scale + 4, top + kBar - 1, fmt::format("{:.3f} ms", ms));
    }
  }
  return svg + "</svg>\n";
}

std::string op_type_table(const json& types) {
  std::string out =
      "<div class=\"wide\"><table class=\"compare\">\n<tr><th>op type</th><th>ops A</th><th>ops B</th><th>MACs "
      "A</th><th>MACs B</th>"
      "<th>bytes A</th><th>bytes B</th><th>ms A</th><th>ms B</th><th>B/A ms</th><th>GFLOP/s A</th><th>GFLOP/s B</th>"
      "</tr>\n";
  for (const json& t : types) {
    const json &a = t["a"], &b = t["b"];
    out += fmt::format(
        "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{:.3f}</td><td>{:.3f}</td><td>{}</td><td>{:.2f}</td><td>{:.2f}</td></tr>\n",
        escape_html(t["type"].get<std::string>()), value_html(a["count"]), value_html(b["count"]),
        value_html(a["macs"]), value_html(b["macs"]), value_html(a["bytes"]), value_html(b["bytes"]),
        a["ms"].get<double>(), b["ms"].get<double>(), value_html(t["ms_ratio"]), a["gflops_per_s"].get<double>(),
        b["gflops_per_s"].get<double>());
  }
  return out + "</table></div>\n";
}

std::string ops_html(const json& ops) {
  std::string s;
  for (const json& o : ops)
    s += fmt::format("{}{} <span class=\"note\">({})</span>", s.empty() ? "" : " + ",
                     escape_html(o["name"].get<std::string>()), escape_html(o["type"].get<std::string>()));
  return s.empty() ? "(nothing)" : s;
}

std::string sum_cells(const json& s) {
  return fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td>", with_commas(s["flops"]),
                     with_commas(s["params"]), with_commas(s["bytes"]), s["ms"].get<double>());
}

std::string node_change_table(const json& changes) {
  if (changes["groups"].empty()) return "<p>None: both sides run the same nodes at the same cost.</p>\n";
  std::string out =
      "<div class=\"wide\"><table class=\"compare ops\">\n<tr><th>A</th><th>B</th><th>FLOPs A</th><th>params A</th>"
      "<th>bytes A</th><th>ms A</th><th>FLOPs B</th><th>params B</th><th>bytes B</th><th>ms B</th></tr>\n";
  auto row = [](const std::string& a, const std::string& b, const json& sa, const json& sb) {
    return fmt::format("<tr><td class=\"name\">{}</td><td class=\"name\">{}</td>{}{}</tr>\n", a, b, sum_cells(sa),
                       sum_cells(sb));
  };
  for (const json& g : changes["groups"]) out += row(ops_html(g["a"]), ops_html(g["b"]), g["a_total"], g["b_total"]);
  out += row("<b>all of the above</b>", "", changes["a_total"], changes["b_total"]);
  return out + "</table></div>\n";
}

// A side's report sections, their ids prefixed so that two reports share one page.
// The bodies come from our own writers, which escape every text they hold: the only
// ' id="' in them are the element ids they set.
std::vector<HtmlSection> side_sections(const json& side) {
  const std::string prefix = side["label"].get<std::string>() == "A" ? "a-" : "b-";
  std::vector<HtmlSection> sections = html_report_sections(side["report"]);
  for (HtmlSection& s : sections) {
    s.id = prefix + s.id;
    s.title = side["label"].get<std::string>() + ": " + s.title;
    for (size_t p = s.body.find(" id=\""); p != std::string::npos; p = s.body.find(" id=\"", p + 1))
      s.body.insert(p + 5, prefix);
  }
  return sections;
}

}  // namespace

std::string format_compare_html(const json& c) {
  const json& sides = c["sides"];
  std::string intro = "<ul>\n";
  for (const json& side : sides)
    intro += fmt::format("<li><b>{}</b> <span class=\"note\">{}, {} thread(s)</span></li>\n",
                         escape_html(side_title(side)), escape_html(side["report"]["model"]["file"].get<std::string>()),
                         side["report"]["threads"].get<int>());
  const json& a = sides[0]["report"];
  intro +=
      fmt::format("</ul>\n<p class=\"note\">{} runs of each side after {} warmup; {}.</p>\n", a["runs"].get<int64_t>(),
                  a["warmup_runs"].get<int>(), escape_html(c["schedule"].get<std::string>()));
  std::vector<HtmlSection> sections = {
      {"compare", "A against B",
       intro + metric_table(c["metrics"]) + "<p class=\"note\">" + escape_html(noise_text(c)) + "</p>\n"},
      {"compare-ratios", "B/A of each figure",
       "<p class=\"note\">Left of 1 (blue), B has less of it than A; right of 1 (orange), more. The axis is "
       "logarithmic.</p>\n" +
           ratio_chart(c["metrics"])},
      {"compare-op-types", "Time by op type (mean ms per run)",
       legend() + op_type_chart(c["op_types"]) + op_type_table(c["op_types"])},
  };
  if (c.contains("node_changes"))
    sections.push_back({"compare-nodes", "Nodes that differ (A -> B)", node_change_table(c["node_changes"])});
  for (const json& side : sides)
    for (HtmlSection& s : side_sections(side)) sections.push_back(std::move(s));
  return html_page("minfer compare: " + side_title(sides[0]) + " against " + side_title(sides[1]), sections);
}

}  // namespace minfer
