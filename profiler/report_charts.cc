#include "profiler/report_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "profiler/report.h"

namespace minfer {

using nlohmann::json;

namespace {

// Tableau 10: distinguishable, and readable on white.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr size_t kPaletteSize = std::size(kPalette);

// A step of 1, 2 or 5 times a power of ten giving about `n` ticks up to `max`.
double nice_step(double max, int n) {
  if (max <= 0) return 1;
  const double raw = max / n;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
}

// Maps [lo, hi] to pixels [p0, p1], linearly or by log10.
struct Axis {
  double lo, hi, p0, p1;
  bool log;
  double operator()(double v) const {
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return p0 + t * (p1 - p0);
  }
};

std::string svg_open(const std::string& id, int width, int height, const std::string& label) {
  return fmt::format(
      "<svg id=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"{}\">\n",
      id, width, height, width, height, escape_html(label));
}

std::string text(double x, double y, const std::string& s, const std::string& attrs = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" {}>{}</text>\n", x, y, attrs, escape_html(s));
}

std::string line(double x1, double y1, double x2, double y2, const std::string& cls) {
  return fmt::format("<line class=\"{}\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n", cls, x1, y1, x2,
                     y2);
}

// 0.01, 0.1, 1, 10, 100, 1000 without trailing zeros.
std::string decade_label(double v) {
  return fmt::format("{:g}", v);
}

// A line of text at (x, y): its baseline.
struct Label {
  double x, y;
  std::string text;
};

// The labels, moved apart vertically (keeping their order) so that no two lines of
// 13 px overlap: parallel roofs of near bandwidths, or close peaks, stay readable.
std::string spread_labels(std::vector<Label> labels, const std::string& cls) {
  constexpr double kLine = 13;
  std::sort(labels.begin(), labels.end(), [](const Label& a, const Label& b) { return a.y < b.y; });
  for (size_t i = 1; i < labels.size(); ++i) labels[i].y = std::max(labels[i].y, labels[i - 1].y + kLine);
  std::string out;
  for (const Label& l : labels)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"{}\">{}</text>\n", l.x, l.y, cls, escape_html(l.text));
  return out;
}

double decade_below(double v) {
  return std::pow(10.0, std::floor(std::log10(v)));
}
double decade_above(double v) {
  return std::pow(10.0, std::ceil(std::log10(v)));
}

}  // namespace

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

OpColours::OpColours(const json& ops) {
  for (const json& op : ops) {
    const std::string label = op_label(op);
    if (colour_.count(label)) continue;
    colour_[label] = kPalette[order_.size() % kPaletteSize];
    order_.push_back(label);
  }
}

const std::string& OpColours::of(const json& op) const {
  return colour_.at(op_label(op));
}

std::string OpColours::legend_html() const {
  std::string out = "<div class=\"legend\">";
  for (const std::string& label : order_)
    out += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", colour_.at(label), escape_html(label));
  return out + "</div>\n";
}

std::string op_time_chart(const json& report, const OpColours& colours) {
  const json& ops = report["ops"];
  constexpr int kWidth = 980, kLabel = 260, kBarArea = 560, kRow = 16, kTop = 28;
  const int height = kTop + kRow * static_cast<int>(ops.size()) + 10;
  double max_ms = 0;
  for (const json& o : ops) max_ms = std::max(max_ms, o["time_ms"]["mean"].get<double>());
  const double step = nice_step(max_ms, 5);
  const Axis x{0, std::max(step * std::ceil(max_ms / step), step), kLabel, kLabel + kBarArea, false};

  std::string svg = svg_open("op-time-chart", kWidth, height, "Mean time of each op, in run order");
  for (double t = 0; t <= x.hi + step / 2; t += step) {
    svg += line(x(t), kTop - 6, x(t), height - 10, "grid");
    svg += text(x(t), kTop - 10, fmt::format("{:g} ms", t), "class=\"tick\" text-anchor=\"middle\"");
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const json& o = ops[i];
    const double ms = o["time_ms"]["mean"].get<double>();
    const double y = kTop + kRow * static_cast<double>(i);
    const std::string name = o["name"].get<std::string>();
    svg += text(kLabel - 6, y + kRow - 4, name, "class=\"label\" text-anchor=\"end\"");
    svg += fmt::format(
        "<rect class=\"op-bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\">"
        "<title>{}</title></rect>\n",
        x(0), y + 2, std::max(x(ms) - x(0), 0.5), kRow - 4, colours.of(o),
        escape_html(fmt::format("{} ({}): {:.3f} ms mean, {:.2f}% of op time, {} FLOPs, {:.2f} GFLOP/s", name,
                                op_label(o), ms, o["percent"].get<double>(), with_commas(o["flops"]),
                                o["gflops_per_s"].get<double>())));
    svg += text(x(ms) + 4, y + kRow - 4, fmt::format("{:.3f} ms  {}", ms, op_label(o)), "class=\"value\"");
  }
  return svg + "</svg>\n";
}

std::string roofline_chart(const json& report, const OpColours& colours) {
  const json& ops = report["ops"];
  const bool has_machine = report.contains("machine");
  const double peak = has_machine ? report["machine"]["peak_gflops"].get<double>() : 0;
  const double fastest = has_machine ? report["machine"]["bandwidth_gbs"]["l1"].get<double>() : 0;
  const double theoretical = has_machine ? report["machine"]["theoretical"]["peak_gflops"].get<double>() : 0;
  const double ridge = has_machine ? report["machine"]["ridge_intensity"].get<double>() : 0;

  // The axes span every point and, with a machine, the roofs and the ridge.
  double i_lo = 1e300, i_hi = 0, g_lo = 1e300, g_hi = 0;
  std::vector<const json*> points, off_chart;
  for (const json& o : ops) {
    const double i = o["arithmetic_intensity"].get<double>(), g = o["gflops_per_s"].get<double>();
    if (i <= 0 || g <= 0) {
      off_chart.push_back(&o);
      continue;
    }
    points.push_back(&o);
    i_lo = std::min(i_lo, i), i_hi = std::max(i_hi, i);
    g_lo = std::min(g_lo, g), g_hi = std::max(g_hi, g);
  }
  if (has_machine) {
    i_lo = std::min(i_lo, std::min(ridge, peak / fastest) / 8), i_hi = std::max(i_hi, ridge * 8);
    g_hi = std::max({g_hi, peak, theoretical});
    g_lo = std::min(g_lo, peak / 100);
  }
  if (i_hi <= 0) i_lo = 0.1, i_hi = 10, g_lo = 0.1, g_hi = 10;  // nothing to place
  constexpr int kWidth = 980, kHeight = 540, kLeft = 80, kRight = 190, kTop = 20, kBottom = 50;
  const Axis x{decade_below(i_lo), std::max(decade_above(i_hi), decade_below(i_lo) * 10), kLeft, kWidth - kRight, true};
  const Axis y{decade_below(g_lo), std::max(decade_above(g_hi), decade_below(g_lo) * 10), kHeight - kBottom, kTop,
               true};

  std::string svg = svg_open("roofline-chart", kWidth, kHeight, "Roofline: GFLOP/s against FLOPs per byte");
  for (double v = x.lo; v <= x.hi * 1.001; v *= 10) {
    svg += line(x(v), y.p0, x(v), y.p1, "grid");
    svg += text(x(v), y.p0 + 18, decade_label(v), "class=\"tick\" text-anchor=\"middle\"");
  }
  for (double v = y.lo; v <= y.hi * 1.001; v *= 10) {
    svg += line(x.p0, y(v), x.p1, y(v), "grid");
    svg += text(x.p0 - 6, y(v) + 4, decade_label(v), "class=\"tick\" text-anchor=\"end\"");
  }
  svg += text((x.p0 + x.p1) / 2, kHeight - 8, "arithmetic intensity (FLOPs per byte moved)",
              "class=\"axis\" text-anchor=\"middle\"");
  svg +=
      text(18, (y.p0 + y.p1) / 2, "attained GFLOP/s",
           fmt::format("class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 18 {:.1f})\"", (y.p0 + y.p1) / 2));

  if (has_machine) {
    // Each level's memory roof rises with intensity until it meets the compute roof at
    // that level's ridge; levels of equal bandwidth (one given by flag) share one roof.
    struct Roof {
      std::string name;  // the levels it stands for
      double gbs;
      const char* key;  // the slowest of them: its style
    };
    std::vector<Roof> roofs;  // fastest first
    for (const auto& [key, name] : {std::pair{"l1", "L1"}, {"l2", "L2"}, {"l3", "L3"}, {"dram", "memory"}}) {
      const double gbs = report["machine"]["bandwidth_gbs"][key].get<double>();
      if (!roofs.empty() && roofs.back().gbs == gbs)
        roofs.back().name += std::string(", ") + name, roofs.back().key = key;
      else
        roofs.push_back({name, gbs, key});
    }
    std::vector<Label> labels;
    for (const auto& [name, gbs, key] : roofs) {
      const double level_ridge = peak / gbs;
      const double start = std::max(x.lo, y.lo / gbs);
      svg += fmt::format(
          "<polyline class=\"roof memory-roof roof-{}\" points=\"{:.1f},{:.1f} {:.1f},{:.1f}\"><title>{}</title>"
          "</polyline>\n",
          key, x(start), y(start * gbs), x(level_ridge), y(peak),
          escape_html(fmt::format("{} roof: intensity x {:.1f} GB/s up to its ridge at {:.2f} FLOPs/byte", name, gbs,
                                  level_ridge)));
      // Labelled at its left end, where the roofs are furthest from the ops' points.
      labels.push_back({x(start) + 6, y(start * gbs) - 4, fmt::format("{} {:.1f} GB/s", name, gbs)});
    }
    svg += fmt::format(
        "<line id=\"roof\" class=\"roof\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"><title>{}</title>"
        "</line>\n",
        x(peak / roofs.front().gbs), y(peak), x.p1, y(peak),
        escape_html(fmt::format("compute roof: {:.1f} GFLOP/s measured", peak)));
    svg += line(x(ridge), y(peak), x(ridge), y.p0, "ridge");
    svg += text(x(ridge) + 4, y.p0 - 6, fmt::format("memory ridge {:.2f}", ridge), "class=\"roof-label\"");
    svg += spread_labels(labels, "roof-label");
    std::vector<Label> peaks = {{x.p1 + 6, y(peak) + 4, fmt::format("measured peak {:.1f} GFLOP/s", peak)}};
    if (theoretical > 0) {
      svg += fmt::format(
          "<line id=\"theoretical-roof\" class=\"roof theoretical\" x1=\"{:.1f}\" y1=\"{:.1f}\" "
          "x2=\"{:.1f}\" y2=\"{:.1f}\"><title>theoretical peak {:.1f} GFLOP/s</title></line>\n",
          x.p0, y(theoretical), x.p1, y(theoretical), theoretical);
      peaks.push_back({x.p1 + 6, y(theoretical) + 4, fmt::format("theoretical {:.1f} GFLOP/s", theoretical)});
    }
    svg += spread_labels(peaks, "roof-label");
  }
  for (const json* p : points) {
    const json& o = *p;
    std::string tip = fmt::format("{} ({}): {:.2f} FLOPs/byte, {:.2f} GFLOP/s, {:.2f} GB/s, median {:.3f} ms",
                                  o["name"].get<std::string>(), op_label(o), o["arithmetic_intensity"].get<double>(),
                                  o["gflops_per_s"].get<double>(), o["gbytes_per_s"].get<double>(),
                                  o["time_ms"]["median"].get<double>());
    if (o.contains("bound"))
      tip += fmt::format("; {}-bound, {:.1f}% of its roofline bound {:.2f} GFLOP/s (its bytes fit in {})",
                         o["bound"].get<std::string>(), 100.0 * o["roofline_fraction"].get<double>(),
                         o["roofline_gflops_per_s"].get<double>(), o["memory_level"].get<std::string>());
    svg += fmt::format(
        "<circle class=\"op-point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"><title>{}</title>"
        "</circle>\n",
        x(o["arithmetic_intensity"].get<double>()), y(o["gflops_per_s"].get<double>()), colours.of(o),
        escape_html(tip));
  }
  svg += "</svg>\n";
  if (!off_chart.empty()) {
    std::string names;
    for (const json* o : off_chart) names += (names.empty() ? "" : ", ") + (*o)["name"].get<std::string>();
    svg += fmt::format("<p class=\"note\">Not on the chart (no FLOPs, so no place on a log axis): {}.</p>\n",
                       escape_html(names));
  }
  return svg;
}

std::string memory_chart(const json& report) {
  const json& plan = report["memory_plan"];
  const json& buffers = plan["buffers"];
  const json& ops = report["ops"];
  int steps = static_cast<int>(ops.size());
  for (const json& b : buffers) steps = std::max(steps, b["last_step"].get<int>() + 1);
  const double arena = std::max(plan["arena_bytes"].get<double>(), 1.0);
  constexpr int kWidth = 980, kHeight = 440, kLeft = 90, kRight = 20, kTop = 14, kBottom = 46;
  const Axis x{0, static_cast<double>(std::max(steps, 1)), kLeft, kWidth - kRight, false};
  const Axis y{0, arena, kHeight - kBottom, kTop, false};

  std::string svg = svg_open("memory-chart", kWidth, kHeight, "Memory plan: buffers by step and arena offset");
  const double ystep = nice_step(arena, 6);
  for (double v = 0; v <= arena; v += ystep) {
    svg += line(x.p0, y(v), x.p1, y(v), "grid");
    svg += text(x.p0 - 6, y(v) + 4, si_units(v) + "B", "class=\"tick\" text-anchor=\"end\"");
  }
  const int xstep = std::max(1, static_cast<int>(nice_step(steps, 12)));
  for (int s = 0; s <= steps; s += xstep) {
    svg += line(x(s), y.p0, x(s), y.p0 + 4, "axis-line");
    svg += text(x(s), y.p0 + 18, std::to_string(s), "class=\"tick\" text-anchor=\"middle\"");
  }
  svg += text((x.p0 + x.p1) / 2, kHeight - 8, "step (op in run order)", "class=\"axis\" text-anchor=\"middle\"");
  svg +=
      text(14, (y.p0 + y.p1) / 2, "arena offset",
           fmt::format("class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1f})\"", (y.p0 + y.p1) / 2));
  svg += line(x.p0, y(arena), x.p1, y(arena), "arena-top");
  std::string labels;  // drawn after every rectangle, so none hides one
  for (size_t i = 0; i < buffers.size(); ++i) {
    const json& b = buffers[i];
    const std::string name = b["name"].get<std::string>();
    const int first = b["first_step"], last = b["last_step"];
    const double offset = b["offset"].get<double>(), bytes = b["bytes"].get<double>();
    const bool workspace = name.ends_with(":workspace");
    std::string tip = fmt::format("{}: {} bytes at offset {}, steps {}..{}", name, with_commas(b["bytes"]),
                                  with_commas(b["offset"]), first, last);
    if (first >= 0 && first < static_cast<int>(ops.size()) && last < static_cast<int>(ops.size()))
      tip += fmt::format(" ({} .. {})", ops[first]["name"].get<std::string>(), ops[last]["name"].get<std::string>());
    svg += fmt::format(
        "<rect class=\"buffer{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
        "<title>{}</title></rect>\n",
        workspace ? " workspace" : "", x(first), y(offset + bytes), std::max(x(last + 1) - x(first), 1.0),
        std::max(y(offset) - y(offset + bytes), 1.0), workspace ? "#bab0ac" : kPalette[i % (kPaletteSize - 1)],
        escape_html(tip));
    // The buffer's first tensor, where the rectangle has room for it across or up (about
    // 6 px a character at 10 px); the others are in its tooltip.
    const std::string label = b["tensors"].empty() ? name : b["tensors"][0].get<std::string>();
    const double width = x(last + 1) - x(first), height = y(offset) - y(offset + bytes);
    const double needed = 6.0 * static_cast<double>(label.size()) + 6;
    if (height >= 13 && width >= needed) {
      labels += text(x(first) + 3, y(offset + bytes) + 11, label, "class=\"buffer-label\"");
    } else if (width >= 13 && height >= needed) {  // a tall, narrow buffer: read upwards
      const double lx = x(first) + 10, ly = y(offset) - 3;
      labels +=
          text(lx, ly, label, fmt::format("class=\"buffer-label\" transform=\"rotate(-90 {:.1f} {:.1f})\"", lx, ly));
    }
  }
  svg += labels + "</svg>\n";
  return svg +
         "<div class=\"legend\"><span><i style=\"background:#4e79a7\"></i><i style=\"background:#f28e2b\"></i>"
         "activation buffers (one colour each; labelled with their first tensor where they have room)</span>"
         "<span><i style=\"background:#bab0ac\"></i>kernel workspace (scratch alive for its op's step)</span>"
         "<span><i style=\"background:none;border-top:2px dashed #c00;height:0\"></i>top of the arena</span></div>\n";
}

}  // namespace minfer
