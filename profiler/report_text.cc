// Text rendering of the report, in the manner of TensorFlow's benchmark_model:
// run order, top by time, top by memory, summary by node type, then totals.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "profiler/report.h"

namespace minfer {

using nlohmann::json;

namespace {

std::string banner(const std::string& title) {
  return fmt::format("============================== {} ==============================\n", title);
}

// "-" for roofline figures of a report built without a machine model.
std::string roofline_percent(const json& o) {
  return o.contains("roofline_fraction") ? fmt::format("{:.1f}%", 100.0 * o["roofline_fraction"].get<double>()) : "-";
}

// [cdf%] accumulates the [%] column down the table as it is sorted, as TensorFlow's
// benchmark_model does: in run order that is the op's cdf_percent, in a top-N table the
// share of the time the rows so far take.
void op_table(std::string& out, const std::vector<const json*>& rows) {
  out += fmt::format(
      "{:>24} {:>9} {:>9} {:>9} {:>9} {:>7} {:>7} {:>10} {:>14} {:>14} {:>11} {:>11} {:>9} {:>8} {:>8} "
      "{:>8} {:>7} {:>6}  {:<16} {}\n",
      "[node type]", "[start]", "[first]", "[avg ms]", "[median]", "[%]", "[cdf%]", "[mem KB]", "[MACs]", "[FLOPs]",
      "[params]", "[bytes KB]", "[GFLOP/s]", "[FLOP/B]", "[GB/s]", "[%roof]", "[bound]", "[level]", "[output shape]",
      "[Name]");
  double cdf = 0;
  for (const json* op : rows) {
    const json& o = *op;
    cdf += o["percent"].get<double>();
    const double bytes_kb = (o["bytes_read"].get<double>() + o["bytes_written"].get<double>()) / 1024.0;
    out += fmt::format(
        "{:>24} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>6.2f}% {:>6.2f}% {:>10.1f} {:>14} {:>14} {:>11} {:>11.1f} "
        "{:>9.2f} {:>8.2f} {:>8.2f} {:>8} {:>7} {:>6}  {:<16} {}\n",
        op_label(o), o["start_ms"].get<double>(), o["time_ms"]["first"].get<double>(),
        o["time_ms"]["mean"].get<double>(), o["time_ms"]["median"].get<double>(), o["percent"].get<double>(), cdf,
        o["bytes_written"].get<double>() / 1024.0, with_commas(o["macs"]), with_commas(o["flops"]),
        with_commas(o["params"]), bytes_kb, o["gflops_per_s"].get<double>(), o["arithmetic_intensity"].get<double>(),
        o["gbytes_per_s"].get<double>(), roofline_percent(o), o.value("bound", "-"), o.value("memory_level", "-"),
        shape_text(o["output_shape"]), o["name"].get<std::string>());
  }
}

std::vector<const json*> top_by(const json& ops, const std::function<double(const json&)>& key, size_t n) {
  std::vector<const json*> rows;
  for (const json& op : ops) rows.push_back(&op);
  std::stable_sort(rows.begin(), rows.end(), [&](const json* a, const json* b) { return key(*a) > key(*b); });
  if (rows.size() > n) rows.resize(n);
  return rows;
}

// The report's op_types: each type's time, MACs and bytes moved, and its share of each.
void type_summary(std::string& out, const json& types) {
  out += fmt::format("{:>24} {:>7} {:>9} {:>8} {:>8} {:>8} {:>8} {:>10} {:>14} {:>14} {:>11} {:>9}\n", "[Node type]",
                     "[count]", "[avg ms]", "[avg %]", "[cdf %]", "[%MACs]", "[%bytes]", "[mem KB]", "[MACs]",
                     "[FLOPs]", "[params]", "[GFLOP/s]");
  double cdf = 0;
  for (const json& r : types) {
    cdf += r["time_percent"].get<double>();
    out += fmt::format(
        "{:>24} {:>7} {:>9.3f} {:>7.2f}% {:>7.2f}% {:>7.2f}% {:>7.2f}% {:>10.1f} {:>14} {:>14} {:>11} "
        "{:>9.2f}\n",
        r["type"].get<std::string>(), r["count"].get<int>(), r["time_ms"].get<double>(),
        r["time_percent"].get<double>(), cdf, r["macs_percent"].get<double>(), r["bytes_percent"].get<double>(),
        r["bytes_written"].get<double>() / 1024.0, with_commas(r["macs"]), with_commas(r["flops"]),
        with_commas(r["params"]), r["gflops_per_s"].get<double>());
  }
}

// A signed change: "-10,085,376 FLOPs", bytes as "-40.50 MB".
std::string change_text(int64_t change, const char* unit, bool si) {
  const std::string sign = change < 0 ? "-" : "+";
  const int64_t magnitude = change < 0 ? -change : change;
  return si ? fmt::format("{}{}B {}", sign, si_units(static_cast<double>(magnitude)), unit)
            : fmt::format("{}{} {}", sign, with_commas(magnitude), unit);
}

// One line per pass: the nodes its actions took and its net change of the model's cost.
void pass_summary(std::string& out, const json& by_pass) {
  for (const std::string& line : pass_summary_lines(by_pass)) out += line + "\n";
}

// Every action of every pass, each with its nodes' cost before and the result's after.
void pass_actions(std::string& out, const json& passes) {
  for (const json& a : passes["actions"]) {
    std::string nodes;
    for (const json& n : a["nodes"]) nodes += (nodes.empty() ? "" : " + ") + n.get<std::string>();
    const std::string action = a["action"];
    out += fmt::format("{}: {} {}", a["pass"].get<std::string>(), action, nodes);
    if (action == "folded" || action == "fused") out += " -> " + a["result"].get<std::string>();
    if (!a["reason"].get<std::string>().empty()) out += " (" + a["reason"].get<std::string>() + ")";
    out += "\n";
    if (action != "kept") {
      out += fmt::format("    before: {}\n    after:  {}", cost_line(a["cost_before"]), cost_line(a["cost_after"]));
      if (a.contains("time_ms_after")) out += fmt::format(", {:.3f} ms", a["time_ms_after"].get<double>());
      out += "\n";
    }
  }
}

// Each op's MACs and FLOPs: the formula, with this op's numbers, and the value.
void cost_formulas(std::string& out, const json& ops) {
  for (const json& o : ops) {
    out += fmt::format("{} ({})\n", o["name"].get<std::string>(), op_label(o));
    for (const auto& [key, unit] : {std::pair{"macs", "MACs"}, {"flops", "FLOPs"}}) {
      const json& f = o["cost_formula"][key];
      out += fmt::format("  {:<6} {} = {} = {}\n", unit, f["symbolic"].get<std::string>(),
                         f["substituted"].get<std::string>(), with_commas(f["value"]));
    }
  }
}

// One value of an op's details, rendered without knowing the op: integers with
// commas, objects as key=value pairs (a "name" first), lists of numbers inline.
std::string detail_value(const json& v) {
  if (v.is_number_integer()) return with_commas(v.get<int64_t>());
  if (v.is_string()) return v.get<std::string>();
  std::string s;
  if (v.is_object()) {
    if (v.contains("name")) s = "name=" + detail_value(v["name"]);
    for (const auto& item : v.items())
      if (item.key() != "name") s += (s.empty() ? "" : " ") + item.key() + "=" + detail_value(item.value());
    return s;
  }
  if (v.is_array()) {
    for (const json& x : v) s += (s.empty() ? "" : ", ") + detail_value(x);
    return "[" + s + "]";
  }
  return v.dump();
}

// Every op's details (Op::details), e.g. an LSTM's memory plan: lists of strings or
// objects one numbered item per line, everything else on the key's line.
void details_section(std::string& out, const json& ops) {
  for (const json& o : ops) {
    const json& details = o["details"];
    if (!details.is_object() || details.empty()) continue;
    out += fmt::format("{} ({})\n", o["name"].get<std::string>(), op_label(o));
    for (const auto& item : details.items()) {
      const json& v = item.value();
      if (v.is_array() && !v.empty() && (v[0].is_object() || v[0].is_string())) {
        out += fmt::format("  {}:\n", item.key());
        for (size_t i = 0; i < v.size(); ++i) out += fmt::format("    [{}] {}\n", i, detail_value(v[i]));
      } else {
        out += fmt::format("  {}: {}\n", item.key(), detail_value(v));
      }
    }
  }
}

// Each depthwise-separable pair beside the regular convolution it replaces, with the
// mean time of each part, then the pairs together.
void separable_pairs(std::string& out, const json& pairs, const json& total) {
  out += fmt::format("{:>14} {:>14} {:>14} {:>14} {:>8}  {:<22} {:>8} {:>8}  {}\n", "[depthwise]", "[pointwise]",
                     "[separable]", "[regular]", "[ratio]", "[regular conv]", "[dw ms]", "[pw ms]",
                     "[depthwise -> pointwise]");
  for (const json& p : pairs) {
    std::string via;
    for (const json& t : p["through"]) via += t.get<std::string>() + " -> ";
    out += fmt::format("{:>14} {:>14} {:>14} {:>14} {:>7.2f}x  {:<22} {:>8.3f} {:>8.3f}  {} -> {}{}\n",
                       with_commas(p["depthwise_macs"]), with_commas(p["pointwise_macs"]),
                       with_commas(p["separable_macs"]), with_commas(p["regular_macs"]), p["ratio"].get<double>(),
                       fmt::format("{} {}->{}", shape_text(p["kernel"]), p["in_channels"].get<int64_t>(),
                                   p["out_channels"].get<int64_t>()),
                       p["depthwise_ms"].get<double>(), p["pointwise_ms"].get<double>(),
                       p["depthwise"].get<std::string>(), via, p["pointwise"].get<std::string>());
  }
  out += fmt::format("{:>14} {:>14} {:>14} {:>14} {:>7.2f}x  {:<22} {:>8.3f} {:>8.3f}  total of {} pair(s)\n",
                     with_commas(total["depthwise_macs"]), with_commas(total["pointwise_macs"]),
                     with_commas(total["separable_macs"]), with_commas(total["regular_macs"]),
                     total["ratio"].get<double>(), "", total["depthwise_ms"].get<double>(),
                     total["pointwise_ms"].get<double>(), pairs.size());
}

void machine_section(std::string& out, const json& m) {
  const json& t = m["theoretical"];
  out += fmt::format("CPU:               {} ({}, {}-bit vectors), {} thread(s)\n", m["cpu"].get<std::string>(),
                     m["isa"].get<std::string>(), t["vector_bits"].get<int>(), m["threads"].get<int>());
  const double theoretical = t["peak_gflops"].get<double>();
  out += fmt::format("Peak fp32:         {:.1f} GFLOP/s measured ({}), {} theoretical\n",
                     m["peak_gflops"].get<double>(), m["peak_source"].get<std::string>(),
                     theoretical > 0 ? fmt::format("{:.1f} GFLOP/s", theoretical) : std::string("unknown (no clock)"));
  out += fmt::format(
      "                   theoretical = {} cores x {:.2f} GHz x {} FLOPs/cycle ({} FMA units x 2 x {} "
      "bits / 32);\n                   clock from {}; the measured peak implies {:.2f} GHz\n",
      t["cores"].get<int>(), t["clock_ghz"].get<double>(), t["flops_per_cycle"].get<int>(), t["fma_units"].get<int>(),
      t["vector_bits"].get<int>(), t["clock_source"].get<std::string>(), t["implied_clock_ghz"].get<double>());
  const json& bw = m["bandwidth_gbs"];
  const json& caches = m["cache_bytes"];
  out += fmt::format("Bandwidth (GB/s):  L1 {:.1f}, L2 {:.1f}, L3 {:.1f}, memory {:.1f} ({})\n", bw["l1"].get<double>(),
                     bw["l2"].get<double>(), bw["l3"].get<double>(), bw["dram"].get<double>(),
                     m["bandwidth_source"].get<std::string>());
  out += fmt::format(
      "Cache bytes:       L1 {}B, L2 {}B, L3 {}B for the threads in use; each op is held to the roof of the "
      "first level its bytes moved fit in ([level])\n",
      si_units(caches["l1"].get<double>()), si_units(caches["l2"].get<double>()), si_units(caches["l3"].get<double>()));
  out += fmt::format("Ridge point:       {:.2f} FLOPs/byte from memory (ops above it are compute-bound)\n",
                     m["ridge_intensity"].get<double>());
}

// Time and roofline figures of compute-bound against memory-bound ops.
void bound_summary(std::string& out, const json& ops) {
  out += fmt::format("{:>10} {:>7} {:>10} {:>8} {:>14} {:>10}\n", "[bound]", "[count]", "[avg ms]", "[%]",
                     "[roofline ms]", "[%roof]");
  for (const char* bound : {"compute", "memory"}) {
    int count = 0;
    double ms = 0, percent = 0, roofline_ms = 0;
    for (const json& o : ops) {
      if (o["bound"] != bound) continue;
      ++count;
      ms += o["time_ms"]["mean"].get<double>();
      percent += o["percent"].get<double>();
      roofline_ms += o["roofline_ms"].get<double>();
    }
    out += fmt::format("{:>10} {:>7} {:>10.3f} {:>7.2f}% {:>14.3f} {:>9.1f}%\n", bound, count, ms, percent, roofline_ms,
                       ms > 0 ? 100.0 * roofline_ms / ms : 0.0);
  }
}

std::string timings_line(const char* title, int64_t count, const json& t) {
  return fmt::format("{}: count={} first={:.3f} min={:.3f} median={:.3f} mean={:.3f} max={:.3f} std={:.3f}\n", title,
                     count, t["first"].get<double>(), t["min"].get<double>(), t["median"].get<double>(),
                     t["mean"].get<double>(), t["max"].get<double>(), t["std"].get<double>());
}

std::string named_shapes(const json& list) {
  std::string s;
  for (const json& x : list) s += (s.empty() ? "" : ", ") + x["name"].get<std::string>() + " " + shape_text(x["shape"]);
  return s;
}

}  // namespace

std::string cost_line(const json& c) {
  return fmt::format("MACs {}, FLOPs {}, params {}, bytes {}", with_commas(c["macs"]), with_commas(c["flops"]),
                     with_commas(c["params"]),
                     with_commas(c["bytes_read"].get<int64_t>() + c["bytes_written"].get<int64_t>()));
}

std::vector<std::string> pass_summary_lines(const json& by_pass) {
  std::vector<std::string> lines;
  for (const json& p : by_pass) {
    std::string what;
    for (const json& c : p["counts"]) {
      const int64_t n = c["nodes"];
      what += fmt::format("{}{} {}{} {}", what.empty() ? "" : ", ", n, c["op_type"].get<std::string>(),
                          n == 1 ? "" : "s", c["action"].get<std::string>());
    }
    std::string change;
    const json& d = p["change"];
    for (const auto& [key, unit] : {std::pair{"macs", "MACs"}, {"flops", "FLOPs"}, {"params", "parameters"}})
      if (d[key].get<int64_t>() != 0) change += (change.empty() ? "" : ", ") + change_text(d[key], unit, false);
    if (d["bytes"].get<int64_t>() != 0) change += (change.empty() ? "" : ", ") + change_text(d["bytes"], "moved", true);
    lines.push_back(fmt::format("{}: {}: {}", p["pass"].get<std::string>(), what.empty() ? "nothing to do" : what,
                                change.empty() ? "no change of cost" : change));
  }
  return lines;
}

std::string stability_summary(const json& s) {
  std::string out = s["load_average"].is_null()
                        ? "load average unknown"
                        : fmt::format("load average {:.2f} on {} logical CPUs", s["load_average"].get<double>(),
                                      s["logical_cpus"].get<int>());
  out += fmt::format("; mean/median latency {:.3f}", s["mean_over_median"].get<double>());
  if (!s["halves_median_ratio"].is_null())
    out += fmt::format("; median of two halves of the runs {:.3f} (an A/A pair: this run's noise floor)",
                       s["halves_median_ratio"].get<double>());
  return out;
}

std::string busy_warning(const json& s) {
  if (!s["busy"].get<bool>()) return "";
  std::string why;
  for (const json& r : s["reasons"]) why += (why.empty() ? "" : "; ") + r.get<std::string>();
  return fmt::format(
      "the machine was busy during the runs ({}): read the median and minimum, not the mean, and rerun on an idle "
      "machine before trusting small differences",
      why);
}

std::string format_text(const json& r, const TextOptions& options) {
  std::string out;
  const json& m = r["model"];
  const json& lat = r["latency_ms"];
  const json& t = r["totals"];
  out += banner("Model");
  out += fmt::format("Model:    {} ({})\n", m["name"].get<std::string>(), m["file"].get<std::string>());
  out += fmt::format("Inputs:   {}\n", named_shapes(m["inputs"]));
  out += fmt::format("Outputs:  {}\n", named_shapes(m["outputs"]));
  out += fmt::format("Nodes:    {}\n", m["nodes"].get<int64_t>());
  out += fmt::format("Threads:  {}\n", r["threads"].get<int>());
  out += fmt::format("Kernels:  {}\n", r["kernel_isa"].get<std::string>());
  out += fmt::format("Runs:     {} (after {} warmup)\n\n", r["runs"].get<int64_t>(), r["warmup_runs"].get<int>());
  if (r.contains("classification")) {
    const json& c = r["classification"];
    out += banner("Classification");
    out += fmt::format("Image {} -> output '{}':\n", c["image"].get<std::string>(), c["output"].get<std::string>());
    int rank = 1;
    for (const json& k : c["top"]) {
      const std::string& label = k["label"].get_ref<const std::string&>();
      const std::string cls = fmt::format("class {}", k["index"].get<int64_t>());
      out += fmt::format("  {}. {:<20} {:>10.6f}{}\n", rank++, label.empty() ? cls : label, k["score"].get<double>(),
                         label.empty() ? "" : "  (" + cls + ")");
    }
    out += "\n";
  }
  if (r.contains("machine")) {
    out += banner("Machine");
    machine_section(out, r["machine"]);
    out += "\n";
  }
  const json& init = r["init_ms"];
  out +=
      fmt::format("Init (ms): load={:.3f} compile={:.3f}\n", init["load"].get<double>(), init["compile"].get<double>());
  out += timings_line("Timings (ms)", r["runs"].get<int64_t>(), lat);
  const json& plain = r["latency_ms_unprofiled"];
  if (r["unprofiled_runs"].get<int64_t>() > 0)
    out += timings_line("Without per-op timing (ms)", r["unprofiled_runs"].get<int64_t>(), plain);
  out += "Stability: " + stability_summary(r["stability"]) + "\n";
  if (const std::string w = busy_warning(r["stability"]); !w.empty()) out += "WARNING: " + w + "\n";
  out += "\n";
  const json& ops = r["ops"];
  std::vector<const json*> order;
  for (const json& op : ops) order.push_back(&op);
  out += banner("Run Order");
  op_table(out, order);
  out += "\n" + banner("Top by Computation Time");
  op_table(out, top_by(
                    ops, [](const json& o) { return o["time_ms"]["mean"].get<double>(); }, 10));
  out += "\n" + banner("Top by Memory Use");
  op_table(out, top_by(
                    ops, [](const json& o) { return o["bytes_written"].get<double>(); }, 10));
  out += "\n" + banner("Summary by node type");
  type_summary(out, r["op_types"]);
  if (options.explain) {
    out += "\n" + banner("Cost formulas");
    cost_formulas(out, ops);
  }
  out += "\n" + banner("Graph passes");
  pass_summary(out, r["passes"]["by_pass"]);
  if (options.verbose) pass_actions(out, r["passes"]);
  out += fmt::format("Model before passes: {}\nModel after passes:  {}\n", cost_line(r["passes"]["cost_before"]),
                     cost_line(r["passes"]["cost_after"]));
  std::string details;
  details_section(details, ops);
  if (!details.empty()) out += "\n" + banner("Op details") + details;
  if (!r["separable_pairs"].empty()) {
    out += "\n" + banner("Depthwise-separable pairs (MACs)");
    separable_pairs(out, r["separable_pairs"], r["separable_pairs_total"]);
  }
  if (r.contains("machine")) {
    out += "\n" + banner("Roofline");
    bound_summary(out, ops);
  }
  out += "\n" + banner("Totals");
  const int64_t macs = t["macs"], flops = t["flops"], params = t["params"];
  out += fmt::format("MACs:                   {} ({})\n", with_commas(macs), si_units(static_cast<double>(macs)));
  out += fmt::format("FLOPs estimate:         {} ({})\n", with_commas(flops), si_units(static_cast<double>(flops)));
  out += fmt::format("Parameters:             {} ({})\n", with_commas(params), si_units(static_cast<double>(params)));
  out += fmt::format("Weight bytes:           {} ({}B)\n", with_commas(t["weight_bytes"]),
                     si_units(t["weight_bytes"].get<double>()));
  out +=
      fmt::format("Peak activation bytes:  {} ({}B planned; lower bound {}B; {}B if every tensor had its own buffer)\n",
                  with_commas(t["peak_activation_bytes"]), si_units(t["peak_activation_bytes"].get<double>()),
                  si_units(r["memory_plan"]["lower_bound_bytes"].get<double>()),
                  si_units(t["naive_activation_bytes"].get<double>()));
  out += fmt::format("Bytes read / written:   {}B / {}B\n", si_units(t["bytes_read"].get<double>()),
                     si_units(t["bytes_written"].get<double>()));
  out += fmt::format("FLOPs/second:           {}\n", si_units(t["flops_per_s"].get<double>()));
  out += fmt::format("Arithmetic intensity:   {:.2f} FLOPs/byte; {:.2f} GB/s moved\n",
                     t["arithmetic_intensity"].get<double>(), t["gbytes_per_s"].get<double>());
  if (t.contains("roofline_ms"))
    out +=
        fmt::format("Roofline:               {:.3f} ms at best (sum over ops); the median run reached {:.1f}% of it\n",
                    t["roofline_ms"].get<double>(), 100.0 * t["roofline_fraction"].get<double>());
  return out;
}

}  // namespace minfer
