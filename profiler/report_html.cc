#include "profiler/report_html.h"

#include <fmt/format.h>

#include "profiler/report.h"
#include "profiler/report_charts.h"

namespace minfer {

using nlohmann::json;

namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { padding: 2px 6px; text-align: right; border-bottom: 1px solid #eee; vertical-align: top; }
th { white-space: normal; }
th:first-child, td:first-child { text-align: left; }
td.name { text-align: left; font-family: monospace; }
table.summary td { text-align: left; }
table.machine td { white-space: nowrap; }
table.machine td:last-child, table.machine th:last-child { white-space: normal; text-align: left; }
svg { max-width: 100%; height: auto; }
table.ops, table.types, table.pairs, table.formulas, table.actions { font-size: 12px; }
td.name { min-width: 8em; } td.formula { text-align: left; font-family: monospace; overflow-wrap: anywhere; }
tr.total th, tr.total td { border-top: 2px solid #888; font-weight: bold; }
.legend span { display: inline-block; margin: 2px 12px 2px 0; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
.note { color: #666; } td.warning { color: #b00; font-weight: bold; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg text.axis { font-size: 13px; }
svg text.roof-label { font-size: 12px; fill: #000; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
svg .grid { stroke: #e4e4e4; } svg .axis-line { stroke: #888; }
svg .roof { fill: none; stroke: #222; stroke-width: 2.5; }
svg .roof-l1 { stroke: #bbb; } svg .roof-l2 { stroke: #999; } svg .roof-l3 { stroke: #666; }
svg .theoretical { stroke: #888; stroke-dasharray: 6 4; stroke-width: 1.5; }
svg .ridge { stroke: #888; stroke-dasharray: 2 3; }
svg .arena-top { stroke: #c00; stroke-dasharray: 4 3; }
svg circle.op-point { stroke: #222; stroke-width: 0.8; fill-opacity: 0.85; }
svg rect.buffer { stroke: #fff; stroke-width: 0.5; fill-opacity: 0.9; }
svg text.buffer-label { font-size: 10px; fill: #000; }
)";

// An op name that may wrap after '+', '_' and '/' (names such as
// "block13_pw+block13_pw_bn+block13_pw_relu" stay whole, on several lines if need be).
std::string breakable(const std::string& name) {
  std::string out;
  for (char c : name) {
    out += escape_html(std::string(1, c));
    if (c == '+' || c == '_' || c == '/') out += "<wbr>";
  }
  return out;
}

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
  out += row("stability", stability_summary(r["stability"]));
  if (const std::string w = busy_warning(r["stability"]); !w.empty())
    out += fmt::format("<tr><th>warning</th><td class=\"warning\">{}</td></tr>\n", escape_html(w));
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
  const json& caches = mc["cache_bytes"];
  for (const auto& [key, name] : {std::pair{"l1", "L1"}, {"l2", "L2"}, {"l3", "L3"}, {"dram", "memory"}})
    out += fmt::format(
        "<tr><th>{} bandwidth</th><td>{:.1f} GB/s</td><td></td><td>STREAM-like triad over {} ({})</td></tr>\n", name,
        mc["bandwidth_gbs"][key].get<double>(),
        caches.contains(key)
            ? fmt::format("half the {} ({}B for the threads in use)", name, si_units(caches[key].get<double>()))
            : std::string("three times the L3"),
        escape_html(mc["bandwidth_source"]));
  out += fmt::format(
      "<tr><th>ridge point</th><td>{:.2f} FLOPs/byte</td><td></td><td>peak / memory bandwidth; an op is held to the "
      "roof of the first level its bytes moved fit in</td></tr>\n",
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
      "<th>bound</th><th>level</th></tr>\n";
  int i = 0;
  for (const json& o : r["ops"]) {
    out += fmt::format(
        "<tr><td>{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td><td>{:.3f}</td><td>{:.3f}</td>"
        "<td>{:.2f}</td>{}{}<td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{}</td><td>{}</td><td>{}</td></"
        "tr>\n",
        i++, breakable(o["name"]), breakable(op_label(o)), shape_text(o["output_shape"]),
        o["time_ms"]["mean"].get<double>(), o["time_ms"]["median"].get<double>(), o["percent"].get<double>(),
        formula_cell(o["cost_formula"]["macs"]), formula_cell(o["cost_formula"]["flops"]),
        with_commas(o["bytes_read"].get<int64_t>() + o["bytes_written"].get<int64_t>()),
        o["arithmetic_intensity"].get<double>(), o["gflops_per_s"].get<double>(), o["gbytes_per_s"].get<double>(),
        o.contains("roofline_fraction") ? fmt::format("{:.1f}%", 100.0 * o["roofline_fraction"].get<double>()) : "-",
        o.value("bound", "-"), o.value("memory_level", "-"));
  }
  return out + "</table>\n";
}

std::string type_table(const json& r) {
  std::string out =
      "<table class=\"types\">\n<tr><th>node type</th><th>count</th><th>mean ms</th><th>% of time</th>"
      "<th>% of MACs</th><th>% of bytes</th><th>MACs</th><th>FLOPs</th><th>bytes moved</th><th>params</th>"
      "<th>GFLOP/s</th></tr>\n";
  for (const json& t : r["op_types"])
    out += fmt::format(
        "<tr><td class=\"name\">{}</td><td>{}</td><td>{:.3f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}</td></tr>\n",
        breakable(t["type"]), t["count"].get<int>(), t["time_ms"].get<double>(), t["time_percent"].get<double>(),
        t["macs_percent"].get<double>(), t["bytes_percent"].get<double>(), with_commas(t["macs"]),
        with_commas(t["flops"]), with_commas(t["bytes"]), with_commas(t["params"]), t["gflops_per_s"].get<double>());
  return out + "</table>\n";
}

std::string passes_section(const json& r) {
  const json& passes = r["passes"];
  std::string out = "<ul class=\"passes\">\n";
  for (const std::string& line : pass_summary_lines(passes["by_pass"])) out += "<li>" + escape_html(line) + "</li>\n";
  out += fmt::format("</ul>\n<p>Model before passes: {}<br>Model after passes: {}</p>\n",
                     cost_line(passes["cost_before"]), cost_line(passes["cost_after"]));
  if (passes["actions"].empty()) return out;
  out += fmt::format(
      "<details><summary>Every action ({})</summary>\n<table class=\"actions\">\n<tr><th>pass</th><th>action</th>"
      "<th>nodes</th><th>result</th><th>before</th><th>after</th></tr>\n",
      passes["actions"].size());
  for (const json& a : passes["actions"]) {
    std::string nodes;
    for (const json& n : a["nodes"]) nodes += (nodes.empty() ? "" : " + ") + n.get<std::string>();
    const std::string reason = a["reason"];
    out += fmt::format(
        "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td><td "
        "class=\"name\">{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td></tr>\n",
        escape_html(a["pass"]), escape_html(a["action"]), breakable(nodes),
        breakable(a["result"].get<std::string>() + (reason.empty() ? "" : " (" + reason + ")")),
        escape_html(cost_line(a["cost_before"])), escape_html(cost_line(a["cost_after"])));
  }
  return out + "</table></details>\n";
}

std::string pairs_table(const json& r) {
  std::string out =
      "<table class=\"pairs\">\n<tr><th>depthwise -&gt; pointwise</th><th>regular conv</th><th>depthwise MACs</th>"
      "<th>pointwise MACs</th><th>separable MACs</th><th>regular MACs</th><th>ratio</th><th>depthwise ms</th>"
      "<th>pointwise ms</th></tr>\n";
  for (const json& p : r["separable_pairs"])
    out += fmt::format(
        "<tr><td class=\"name\">{} -&gt; {}</td><td>{} {}-&gt;{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{:.2f}x</td><td>{:.3f}</td><td>{:.3f}</td></tr>\n",
        breakable(p["depthwise"]), breakable(p["pointwise"]), shape_text(p["kernel"]), p["in_channels"].get<int64_t>(),
        p["out_channels"].get<int64_t>(), with_commas(p["depthwise_macs"]), with_commas(p["pointwise_macs"]),
        with_commas(p["separable_macs"]), with_commas(p["regular_macs"]), p["ratio"].get<double>(),
        p["depthwise_ms"].get<double>(), p["pointwise_ms"].get<double>());
  const json& t = r["separable_pairs_total"];
  out += fmt::format(
      "<tr class=\"total\"><th>total of {} pair(s)</th><td></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
      "<td>{:.2f}x</td><td>{:.3f}</td><td>{:.3f}</td></tr>\n",
      r["separable_pairs"].size(), with_commas(t["depthwise_macs"]), with_commas(t["pointwise_macs"]),
      with_commas(t["separable_macs"]), with_commas(t["regular_macs"]), t["ratio"].get<double>(),
      t["depthwise_ms"].get<double>(), t["pointwise_ms"].get<double>());
  return out + "</table>\n";
}

std::string formula_table(const json& r) {
  std::string out =
      "<table class=\"formulas\">\n<tr><th>op</th><th>count</th><th>formula</th><th>with this op's numbers</th>"
      "<th>value</th></tr>\n";
  for (const json& o : r["ops"])
    for (const auto& [key, unit] : {std::pair{"macs", "MACs"}, {"flops", "FLOPs"}}) {
      const json& f = o["cost_formula"][key];
      out += fmt::format(
          "<tr><td class=\"name\">{}</td><td>{}</td><td class=\"formula\">{}</td><td class=\"formula\">{}</td>"
          "<td>{}</td></tr>\n",
          std::string(key) == "macs" ? breakable(o["name"].get<std::string>() + " (" + op_label(o) + ")") : "", unit,
          escape_html(f["symbolic"]), escape_html(f["substituted"]), with_commas(f["value"]));
    }
  return out + "</table>\n";
}

}  // namespace

std::vector<HtmlSection> html_report_sections(const json& r) {
  const OpColours colours(r["ops"]);
  const json& plan = r["memory_plan"];
  std::vector<HtmlSection> sections = {
      {"summary", "Summary", summary(r)},
      {"op-times", "Time per op (mean over runs, coloured by op type)",
       colours.legend_html() + op_time_chart(r, colours)},
      {"roofline", "Roofline",
       "<p class=\"note\">Each op at its arithmetic intensity and attained GFLOP/s; below the roof is room to gain. "
       "The diagonal roofs are the measured bandwidths of L1, L2, L3 and main memory: each op is held to the roof "
       "of the level its bytes moved fit in. Hover a point for its figures and level.</p>\n" +
           colours.legend_html() + roofline_chart(r, colours)},
      {"memory", "Memory plan",
       fmt::format(
           "<p class=\"note\">{} buffers in one arena of {} bytes ({}B; every tensor in its own buffer: "
           "{}B). Each rectangle is one buffer: across, the steps it is alive (from the op that writes it to the last "
           "that reads it); up, its offset and size in the arena. Hover one for its tensors.</p>\n",
           plan["buffers"].size(), with_commas(plan["arena_bytes"]), si_units(plan["arena_bytes"].get<double>()),
           si_units(plan["naive_bytes"].get<double>())) +
           memory_chart(r)},
      {"ops", "Ops in run order",
       "<p class=\"note\">Hover a count of MACs or FLOPs for its formula. Throughput and the share of the roof come "
       "from each op's median time; the roof is that of the level (L1, L2, L3 or main memory) the op's bytes fit "
       "in.</p>\n" +
           op_table(r)},
      {"types", "Summary by node type",
       "<p class=\"note\">Each share is of the sum over all ops: a type that takes more of the time than of the "
       "MACs is slower per MAC than the rest.</p>\n" +
           type_table(r)},
      {"passes", "Graph passes", passes_section(r)},
  };
  if (!r["separable_pairs"].empty())
    sections.push_back({"pairs", "Depthwise-separable pairs",
                        "<p class=\"note\">Each depthwise convolution feeding a pointwise one, beside the regular "
                        "convolution it stands for (ratio = regular / separable MACs).</p>\n" +
                            pairs_table(r)});
  sections.push_back({"formulas", "Cost formulas",
                      "<p class=\"note\">Each op's MACs and FLOPs: the formula of its cost code, the same with "
                      "this op's numbers, and the count.</p>\n" +
                          formula_table(r)});
  return sections;
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
