#include "profiler/report_html.h"

#include <fmt/format.h>

#include "profiler/report.h"
#include "profiler/report_charts.h"

namespace minfer {

using nlohmann::json;

namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px auto; max-width: 1000px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { padding: 2px 10px; text-align: right; border-bottom: 1px solid #eee; }
th:first-child, td:first-child { text-align: left; }
td.name { text-align: left; font-family: monospace; }
table.summary td { text-align: left; }
table.machine td { white-space: nowrap; }
table.machine td:last-child, table.machine th:last-child { white-space: normal; text-align: left; }
svg { max-width: 100%; height: auto; }
div.wide { overflow-x: auto; } table.ops { font-size: 12px; }
.legend span { display: inline-block; margin: 2px 12px 2px 0; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
.note { color: #666; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg text.axis { font-size: 13px; } svg text.roof-label { font-size: 12px; fill: #000; }
svg .grid { stroke: #e4e4e4; } svg .axis-line { stroke: #888; }
svg .roof { fill: none; stroke: #222; stroke-width: 2.5; }
svg .theoretical { stroke: #888; stroke-dasharray: 6 4; stroke-width: 1.5; }
svg .ridge { stroke: #888; stroke-dasharray: 2 3; }
svg .arena-top { stroke: #c00; stroke-dasharray: 4 3; }
svg circle.op-point { stroke: #222; stroke-width: 0.8; fill-opacity: 0.85; }
svg rect.buffer { stroke: #fff; stroke-width: 0.5; fill-opacity: 0.9; }
)";

std::string row(const std::string& label, const std::string& value) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape_html(label), escape_html(value));
}

std::string named_shapes(const json& list) {
  std::string s;
  for (const json& x : list) s += (s.empty() ? "" : ", ") + x["name"].get<std::string>() + " " + shape_text(x["shape"]);
  return s;
}

std::string count_and_si(const json& v) {
  return fmt::format("{} ({})", with_commas(v.get<int64_t>()), si_units(v.get<double>()));
}

std::string summary(const json& r) {
  const json& m = r["model"];
  const json& t = r["totals"];
  const json& lat = r["latency_ms"];
  std::string out = "<table class=\"summary\">\n";
  out += row("model", fmt::format("{} ({})", m["name"].get<std::string>(), m["file"].get<std::string>()));
  out += row("inputs", named_shapes(m["inputs"]));
  out += row("outputs", named_shapes(m["outputs"]));
  out += row("nodes", std::to_string(m["nodes"].get<int64_t>()));
  out += row("threads", std::to_string(r["threads"].get<int>()));
  out += row("kernels", escape_html(r["kernel_isa"].get<std::string>()));
  out += row("runs", fmt::format("{} (after {} warmup)", r["runs"].get<int64_t>(), r["warmup_runs"].get<int>()));
  out +=
      row("latency (ms)", fmt::format("mean {:.3f}, median {:.3f}, min {:.3f}, max {:.3f}, std {:.3f}, first {:.3f}",
                                      lat["mean"].get<double>(), lat["median"].get<double>(), lat["min"].get<double>(),
                                      lat["max"].get<double>(), lat["std"].get<double>(), lat["first"].get<double>()));
  if (r.contains("classification")) {
    const json& c = r["classification"];
    std::string top;
    for (const json& k : c["top"])
      top += fmt::format("{}{} {:.4f}", top.empty() ? "" : ", ",
                         k["label"].get<std::string>().empty() ? "class " + std::to_string(k["index"].get<int64_t>())
                                                               : k["label"].get<std::string>(),
                         k["score"].get<double>());
    out += row("classification",
               fmt::format("{} -> {}: {}", c["image"].get<std::string>(), c["output"].get<std::string>(), top));
  }
  const json& init = r["init_ms"];
  out += row("init (ms)",
             fmt::format("load {:.3f}, compile {:.3f}", init["load"].get<double>(), init["compile"].get<double>()));
  if (r["unprofiled_runs"].get<int64_t>() > 0) {
    const json& plain = r["latency_ms_unprofiled"];
    out += row("latency without per-op timing (ms)",
               fmt::format("mean {:.3f}, median {:.3f}, min {:.3f}, max {:.3f} ({} runs between the profiled ones)",
                           plain["mean"].get<double>(), plain["median"].get<double>(), plain["min"].get<double>(),
                           plain["max"].get<double>(), r["unprofiled_runs"].get<int64_t>()));
  }
  out += row("MACs", count_and_si(t["macs"]));
  out += row("FLOPs", count_and_si(t["flops"]));
  out += row("parameters", count_and_si(t["params"]));
  out += row("weight bytes", count_and_si(t["weight_bytes"]));
  out += row("peak activation bytes",
             fmt::format("{} ({}B; {}B if every tensor had its own buffer)", with_commas(t["peak_activation_bytes"]),
                         si_units(t["peak_activation_bytes"].get<double>()),
                         si_units(t["naive_activation_bytes"].get<double>())));
  out += row("bytes read / written", fmt::format("{}B / {}B", si_units(t["bytes_read"].get<double>()),
                                                 si_units(t["bytes_written"].get<double>())));
  out += row("attained", fmt::format("{:.2f} GFLOP/s, {:.2f} GB/s, {:.2f} FLOPs/byte", t["gflops_per_s"].get<double>(),
                                     t["gbytes_per_s"].get<double>(), t["arithmetic_intensity"].get<double>()));
  if (t.contains("roofline_ms"))
    out += row("roofline", fmt::format("{:.3f} ms at best (sum over ops); the median run reached {:.1f}% of it",
                                       t["roofline_ms"].get<double>(), 100.0 * t["roofline_fraction"].get<double>()));
  out += "</table>\n";
  if (!r.contains("machine")) return out + "<p class=\"note\">No machine model: no roofline figures.</p>\n";

  const json& mc = r["machine"];
  const json& th = mc["theoretical"];
  const double theoretical = th["peak_gflops"].get<double>();
  out += fmt::format("<h3>Machine: {} ({}, {}-bit vectors), {} thread(s)</h3>\n", escape_html(mc["cpu"]),
                     escape_html(mc["isa"]), th["vector_bits"].get<int>(), mc["threads"].get<int>());
  out += "<table class=\"machine\">\n<tr><th></th><th>measured</th><th>theoretical</th><th>how</th></tr>\n";
  out += fmt::format(
      "<tr><th>peak fp32</th><td>{:.1f} GFLOP/s</td><td>{}</td><td>measured: FMA loop ({}); theoretical: {} cores x "
      "{:.2f} GHz x {} FLOPs/cycle ({} FMA units x 2 x {} bits / 32), clock from {}; the measured peak implies "
      "{:.2f} GHz</td></tr>\n",
      mc["peak_gflops"].get<double>(), theoretical > 0 ? fmt::format("{:.1f} GFLOP/s", theoretical) : "unknown",
      escape_html(mc["peak_source"]), th["cores"].get<int>(), th["clock_ghz"].get<double>(),
      th["flops_per_cycle"].get<int>(), th["fma_units"].get<int>(), th["vector_bits"].get<int>(),
      escape_html(th["clock_source"]), th["implied_clock_ghz"].get<double>());
  out += fmt::format("<tr><th>memory bandwidth</th><td>{:.1f} GB/s</td><td></td><td>STREAM-like triad ({})</td></tr>\n",
                     mc["bandwidth_gbs"].get<double>(), escape_html(mc["bandwidth_source"]));
  out += fmt::format("<tr><th>ridge point</th><td>{:.2f} FLOPs/byte</td><td></td><td>peak / bandwidth</td></tr>\n",
                     mc["ridge_intensity"].get<double>());
  return out + "</table>\n";
}

// A count in a cell whose hover shows its formula: symbolic, substituted, value.
std::string formula_cell(const json& formula) {
  return fmt::format("<td title=\"{} = {}\">{}</td>", escape_html(formula["symbolic"]),
                     escape_html(formula["substituted"]), with_commas(formula["value"]));
}

std::string op_table(const json& r) {
  std::string out =
      "<table class=\"ops\">\n<tr><th>#</th><th>name</th><th>type</th><th>output</th><th>mean ms</th><th>median ms</th>"
      "<th>%</th>"
      "<th>MACs</th><th>FLOPs</th><th>bytes</th><th>FLOPs/byte</th><th>GFLOP/s</th><th>GB/s</th><th>% of roof</th>"
      "<th>bound</th></tr>\n";
  int i = 0;
  for (const json& o : r["ops"]) {
    out += fmt::format(
        "<tr><td>{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td><td>{:.3f}</td><td>{:.3f}</td>"
        "<td>{:.2f}</td>{}{}<td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{}</td><td>{}</td></tr>\n",
        i++, escape_html(o["name"]), escape_html(op_label(o)), shape_text(o["output_shape"]),
        o["time_ms"]["mean"].get<double>(), o["time_ms"]["median"].get<double>(), o["percent"].get<double>(),
        formula_cell(o["cost_formula"]["macs"]), formula_cell(o["cost_formula"]["flops"]),
        with_commas(o["bytes_read"].get<int64_t>() + o["bytes_written"].get<int64_t>()),
        o["arithmetic_intensity"].get<double>(), o["gflops_per_s"].get<double>(), o["gbytes_per_s"].get<double>(),
        o.contains("roofline_fraction") ? fmt::format("{:.1f}%", 100.0 * o["roofline_fraction"].get<double>()) : "-",
        o.value("bound", "-"));
  }
  return "<div class=\"wide\">" + out + "</table></div>\n";
}

}  // namespace

std::vector<HtmlSection> html_report_sections(const json& r) {
  const OpColours colours(r["ops"]);
  const json& plan = r["memory_plan"];
  return {
      {"summary", "Summary", summary(r)},
      {"op-times", "Time per op (mean over runs, coloured by op type)",
       colours.legend_html() + op_time_chart(r, colours)},
      {"roofline", "Roofline",
       "<p class=\"note\">Each op at its arithmetic intensity and attained GFLOP/s; below the roof is room to gain. "
       "A point above the memory roof read its data from cache, faster than from memory. Hover a point for its "
       "figures.</p>\n" +
           colours.legend_html() + roofline_chart(r, colours)},
      {"memory", "Memory plan",
       fmt::format("<p class=\"note\">{} buffers in one arena of {} bytes ({}B; every tensor in its own buffer: "
                   "{}B). Each rectangle spans its buffer's lifetime across and its bytes up.</p>\n",
                   plan["buffers"].size(), with_commas(plan["arena_bytes"]),
                   si_units(plan["arena_bytes"].get<double>()), si_units(plan["naive_bytes"].get<double>())) +
           memory_chart(r)},
      {"ops", "Ops in run order",
       "<p class=\"note\">Hover a count of MACs or FLOPs for its formula. Throughput and the share of the roof come "
       "from each op's median time.</p>\n" +
           op_table(r)},
  };
}

std::string html_page(const std::string& title, const std::vector<HtmlSection>& sections) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{}</style>\n"
      "</head>\n<body>\n<h1>{}</h1>\n",
      escape_html(title), kStyle, escape_html(title));
  for (const HtmlSection& s : sections)
    out += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", s.id, escape_html(s.title), s.body);
  return out + "</body>\n</html>\n";
}

std::string format_html(const json& report) {
  return html_page("minfer profile: " + report["model"]["name"].get<std::string>(), html_report_sections(report));
}

}  // namespace minfer
