#include "profiler/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "profiler/roofline.h"
#include "profiler/stats.h"

namespace minfer {

using nlohmann::json;

namespace {

json stats_json(const TimingStats& s) {
  return {{"first", s.first}, {"mean", s.mean}, {"min", s.min}, {"median", s.median}, {"max", s.max}, {"std", s.std}};
}

json cost_json(const Cost& c) {
  return {{"macs", c.macs},
          {"flops", c.flops},
          {"params", c.params},
          {"bytes_read", c.bytes_read},
          {"bytes_written", c.bytes_written}};
}

void add_attained(json& j, const Cost& cost, double ms) {
  const Throughput t = throughput(cost, ms);
  j["arithmetic_intensity"] = t.intensity;
  j["gflops_per_s"] = t.gflops_per_s;
  j["gbytes_per_s"] = t.gbytes_per_s;
}

void add_roofline(json& j, const Cost& cost, double ms, const MachineModel& machine) {
  const RooflineBound r = roofline_bound(cost, ms, machine);
  j["roofline_gflops_per_s"] = r.gflops_per_s;
  j["roofline_ms"] = r.ms;
  j["roofline_fraction"] = r.fraction;
  j["bound"] = r.compute_bound ? "compute" : "memory";
  j["memory_level"] = memory_level_name(r.level);
}

// A count's formula: symbolic, with this op's numbers, and its value (profiler/cost.h).
json formula_json(const CostExpr& e) {
  return {{"symbolic", e.symbolic()}, {"substituted", e.substituted()}, {"value", e.value()}};
}

json cost_formula_json(const OpRecord& op) {
  if (op.cost.macs != op.cost.macs_formula.value() || op.cost.flops != op.cost.flops_formula.value())
    throw std::logic_error(fmt::format("op '{}': its MACs or FLOPs differ from their formulas", op.name));
  return {{"macs", formula_json(op.cost.macs_formula)}, {"flops", formula_json(op.cost.flops_formula)}};
}

double percent_of(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

// Ops summed by type and kind, most time first, each with its share of the model's time
// (mean op times), MACs and bytes moved.
json op_types_json(const json& ops, const Cost& total, double sum_mean_ms) {
  struct Row {
    int count = 0;
    double ms = 0;
    Cost cost;
  };
  std::map<std::string, Row> by_type;
  for (const json& o : ops) {
    Row& r = by_type[op_label(o)];
    r.count++;
    r.ms += o["time_ms"]["mean"].get<double>();
    r.cost += Cost{o["macs"].get<int64_t>(), o["flops"].get<int64_t>(), o["params"].get<int64_t>(),
                   o["bytes_read"].get<int64_t>(), o["bytes_written"].get<int64_t>()};
  }
  std::vector<std::pair<std::string, Row>> rows(by_type.begin(), by_type.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  json list = json::array();
  for (const auto& [label, r] : rows)
    list.push_back(
        {{"type", label},
         {"count", r.count},
         {"time_ms", r.ms},
         {"time_percent", percent_of(r.ms, sum_mean_ms)},
         {"macs", r.cost.macs},
         {"macs_percent", percent_of(static_cast<double>(r.cost.macs), static_cast<double>(total.macs))},
         {"flops", r.cost.flops},
         {"params", r.cost.params},
         {"bytes_written", r.cost.bytes_written},
         {"bytes", r.cost.bytes()},
         {"bytes_percent", percent_of(static_cast<double>(r.cost.bytes()), static_cast<double>(total.bytes()))},
         {"gflops_per_s", r.ms > 0 ? static_cast<double>(r.cost.flops) / (r.ms * 1e6) : 0.0}});
  return list;
}

// Each pass as a whole: how many nodes of which type each action took, and the change
// of the model's cost, the sum of its actions' changes (after - before). Their sum over
// the passes is the model's cost after the passes minus before.
json by_pass_json(const ReportInput& in) {
  json list = json::array();
  for (const std::string& name : in.passes_run) {
    Cost before, after;
    int actions = 0;
    std::vector<std::pair<std::string, std::string>> order;  // (action, op type) as first met
    std::map<std::pair<std::string, std::string>, int64_t> nodes;
    for (const PassRecord& p : in.passes) {
      if (p.pass != name) continue;
      before += p.before;
      after += p.after;
      ++actions;
      const std::pair<std::string, std::string> key{p.action, p.op_type};
      if (!nodes.count(key)) order.push_back(key);
      // A fold or fusion names its producer first: the nodes acted on are the rest. A swap
      // names the node moved, then the one it moved past.
      const bool first_only = p.action == "swapped";
      const bool merges = p.action == "folded" || p.action == "fused";
      nodes[key] += first_only ? 1 : static_cast<int64_t>(p.nodes.size()) - (merges ? 1 : 0);
    }
    json counts = json::array();
    for (const auto& key : order)
      counts.push_back({{"action", key.first}, {"op_type", key.second}, {"nodes", nodes[key]}});
    json change = {{"macs", after.macs - before.macs},
                   {"flops", after.flops - before.flops},
                   {"params", after.params - before.params},
                   {"bytes", after.bytes() - before.bytes()}};
    list.push_back({{"pass", name},
                    {"actions", actions},
                    {"counts", counts},
                    {"change", change},
                    {"cost_before", cost_json(before)},
                    {"cost_after", cost_json(after)}});
  }
  return list;
}

// Thresholds of the busy-machine warning (docs/profiling.md, "Was the machine busy?").
// More runnable threads than CPUs means some waited for one; a mean 10% above the
// median means some runs were delayed well beyond the others (delays only add time).
constexpr double kBusyMeanOverMedian = 1.10;
constexpr int kMinRunsForSpread = 5;

// Whether the machine was busy during the runs, and the figures that say so. The
// median latencies of two halves of the runs are an A/A pair inside one side: their
// ratio is what the same model, run twice, differs by on this machine at this time.
json stability_json(const ReportInput& in, const TimingStats& latency) {
  json reasons = json::array();
  if (in.load_average >= 0 && in.load_average > in.logical_cpus)
    reasons.push_back(fmt::format("load average {:.2f} on {} logical CPUs", in.load_average, in.logical_cpus));
  const double mean_over_median = latency.median > 0 ? latency.mean / latency.median : 1.0;
  if (latency.count >= kMinRunsForSpread && mean_over_median > kBusyMeanOverMedian)
    reasons.push_back(fmt::format("mean latency {:.0f}% above the median", 100.0 * (mean_over_median - 1.0)));
  json halves = nullptr;
  if (in.latency_ms.size() >= 4) {
    // Runs in alternating pairs (1-2, 5-6, ... against 3-4, 7-8, ...): a comparison runs
    // its sides A B, B A, A B, ..., so each half holds as many runs first as second of
    // their pair, and a side's position alone (a cache warmed by the other) splits nothing.
    std::vector<double> first, second;
    for (size_t i = 0; i < in.latency_ms.size(); ++i) (i / 2 % 2 ? second : first).push_back(in.latency_ms[i]);
    halves = summarize(first).median / summarize(second).median;
  }
  return {{"load_average", in.load_average >= 0 ? json(in.load_average) : json(nullptr)},
          {"logical_cpus", in.logical_cpus},
          {"mean_over_median", mean_over_median},
          {"halves_median_ratio", halves},
          {"busy", !reasons.empty()},
          {"reasons", reasons}};
}

// A depthwise-separable pair's (or all pairs') MACs against the regular convolution's,
// and the mean time of each part.
json pair_figures(const SeparablePairRecord& p, double depthwise_ms, double pointwise_ms) {
  const int64_t separable = p.depthwise_macs + p.pointwise_macs;
  return {{"depthwise_macs", p.depthwise_macs},
          {"pointwise_macs", p.pointwise_macs},
          {"separable_macs", separable},
          {"regular_macs", p.regular_macs},
          {"ratio", separable > 0 ? static_cast<double>(p.regular_macs) / static_cast<double>(separable) : 0.0},
          {"depthwise_ms", depthwise_ms},
          {"pointwise_ms", pointwise_ms}};
}

json shapes_json(const std::vector<NamedShape>& shapes) {
  json list = json::array();
  for (const NamedShape& s : shapes) list.push_back({{"name", s.name}, {"shape", s.shape}});
  return list;
}

}  // namespace

json build_report(const ReportInput& in) {
  const TimingStats latency = summarize(in.latency_ms);
  Cost total;
  double sum_mean_ms = 0;
  std::vector<TimingStats> op_stats;
  for (const OpRecord& op : in.ops) {
    total += op.cost;
    op_stats.push_back(summarize(op.times_ms));
    sum_mean_ms += op_stats.back().mean;
  }

  json ops = json::array();
  double cdf = 0, start = 0;
  // Attained throughput and roofline fractions use each op's median time, which one
  // disturbed run moves less than the mean; shares and the time line use the mean.
  for (size_t i = 0; i < in.ops.size(); ++i) {
    const OpRecord& op = in.ops[i];
    const TimingStats& t = op_stats[i];
    const double percent = percent_of(t.mean, sum_mean_ms);
    cdf += percent;
    ops.push_back({{"name", op.name},
                   {"type", op.type},
                   {"kind", op.kind},
                   {"output_shape", op.output_shape},
                   {"macs", op.cost.macs},
                   {"flops", op.cost.flops},
                   {"params", op.cost.params},
                   {"bytes_read", op.cost.bytes_read},
                   {"bytes_written", op.cost.bytes_written},
                   {"time_ms", stats_json(t)},
                   {"start_ms", start},
                   {"percent", percent},
                   {"cdf_percent", cdf},
                   {"details", op.details.is_null() ? json::object() : op.details},
                   {"cost_formula", cost_formula_json(op)}});
    Cost moved = op.cost;
    moved.bytes_read -= op.bytes_in_place;
    moved.bytes_written -= op.bytes_in_place;
    if (op.bytes_in_place > 0) ops.back()["bytes_in_place"] = op.bytes_in_place;
    add_attained(ops.back(), moved, t.median);
    if (in.machine) add_roofline(ops.back(), moved, t.median, *in.machine);
    start += t.mean;
  }

  json buffers = json::array();
  for (const BufferSpan& b : in.buffers)
    buffers.push_back({{"name", b.name},
                       {"tensors", b.tensors},
                       {"offset", b.offset},
                       {"bytes", b.bytes},
                       {"first_step", b.first_step},
                       {"last_step", b.last_step}});

  json passes = json::array();
  for (const PassRecord& p : in.passes) {
    json a = {{"pass", p.pass},
              {"action", p.action},
              {"nodes", p.nodes},
              {"result", p.result},
              {"reason", p.reason},
              {"cost_before", cost_json(p.before)},
              {"cost_after", cost_json(p.after)}};
    if (p.step >= 0) a["time_ms_after"] = op_stats[p.step].mean;
    passes.push_back(a);
  }
  std::map<std::string, double> mean_ms;  // by op name
  for (size_t i = 0; i < in.ops.size(); ++i) mean_ms[in.ops[i].name] = op_stats[i].mean;
  json pairs = json::array();
  SeparablePairRecord all;  // the pairs together
  double all_dw_ms = 0, all_pw_ms = 0;
  for (const SeparablePairRecord& p : in.separable_pairs) {
    const double dw_ms = mean_ms.count(p.depthwise) ? mean_ms[p.depthwise] : 0.0;
    const double pw_ms = mean_ms.count(p.pointwise) ? mean_ms[p.pointwise] : 0.0;
    all.depthwise_macs += p.depthwise_macs, all.pointwise_macs += p.pointwise_macs;
    all.regular_macs += p.regular_macs;
    all_dw_ms += dw_ms, all_pw_ms += pw_ms;
    json pair = {{"depthwise", p.depthwise}, {"pointwise", p.pointwise},     {"through", p.through},
                 {"kernel", p.kernel},       {"in_channels", p.in_channels}, {"out_channels", p.out_channels}};
    pair.update(pair_figures(p, dw_ms, pw_ms));
    pairs.push_back(pair);
  }

  json totals = {{"macs", total.macs},
                 {"flops", total.flops},
                 {"params", total.params},
                 {"weight_bytes", 4 * total.params},
                 {"peak_activation_bytes", in.peak_activation_bytes},
                 {"naive_activation_bytes", in.naive_activation_bytes},
                 {"bytes_read", total.bytes_read},
                 {"bytes_written", total.bytes_written}};
  add_attained(totals, total, latency.median);
  totals["flops_per_s"] = totals["gflops_per_s"].get<double>() * 1e9;
  if (in.machine) {
    // The model's least time is the sum of its ops' (each bound by its own limit), not
    // what the totals' one average intensity would allow.
    double roofline_ms = 0;
    for (const json& o : ops) roofline_ms += o["roofline_ms"].get<double>();
    totals["roofline_ms"] = roofline_ms;
    totals["roofline_fraction"] = latency.median > 0 ? roofline_ms / latency.median : 0.0;
  }

  json report = {{"model",
                  {{"name", in.model_name},
                   {"file", in.model_file},
                   {"inputs", shapes_json(in.inputs)},
                   {"outputs", shapes_json(in.outputs)},
                   {"nodes", in.ops.size()}}},
                 {"threads", in.threads},
                 {"kernel_isa", in.kernel_isa},
                 {"runs", latency.count},
                 {"warmup_runs", in.warmup_runs},
                 {"totals", totals},
                 {"latency_ms", stats_json(latency)},
                 {"latency_ms_unprofiled", stats_json(summarize(in.latency_unprofiled_ms))},
                 {"unprofiled_runs", in.latency_unprofiled_ms.size()},
                 {"init_ms", {{"load", in.load_ms}, {"compile", in.compile_ms}}},
                 {"stability", stability_json(in, latency)},
                 {"op_types", op_types_json(ops, total, sum_mean_ms)},
                 {"ops", ops},
                 {"passes",
                  {{"actions", passes},
                   {"by_pass", by_pass_json(in)},
                   {"cost_before", cost_json(in.cost_before_passes)},
                   {"cost_after", cost_json(total)}}},
                 {"memory_plan",
                  {{"arena_bytes", in.peak_activation_bytes},
                   {"naive_bytes", in.naive_activation_bytes},
                   {"lower_bound_bytes", in.lower_bound_bytes},
                   {"buffers", buffers}}},
                 {"separable_pairs", pairs},
                 {"separable_pairs_total", pair_figures(all, all_dw_ms, all_pw_ms)}};
  if (in.machine) report["machine"] = to_json(*in.machine);
  return report;
}

std::string op_label(const json& op) {
  const std::string& type = op["type"].get_ref<const std::string&>();
  const std::string& kind = op["kind"].get_ref<const std::string&>();
  return kind.empty() ? type : type + "/" + kind;
}

std::string shape_text(const json& shape) {
  std::string s;
  for (const json& d : shape) s += (s.empty() ? "" : "x") + std::to_string(d.get<int64_t>());
  return s.empty() ? "scalar" : s;
}

std::string with_commas(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string si_units(double value) {
  const char* units[] = {"", "K", "M", "G", "T", "P"};
  int u = 0;
  while (std::abs(value) >= 1000.0 && u < 5) {
    value /= 1000.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f}", value) : fmt::format("{:.2f} {}", value, units[u]);
}

}  // namespace minfer
