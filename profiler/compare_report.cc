#include "profiler/compare_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "profiler/report.h"

namespace minfer {

using nlohmann::json;

namespace {

// B/A, or null when A is zero (no ratio to speak of).
json ratio(const json& a, const json& b) {
  const double x = a.get<double>();
  return x != 0 ? json(b.get<double>() / x) : json(nullptr);
}

json metric(const std::string& key, const std::string& name, const json& a, const json& b) {
  return {{"key", key}, {"name", name}, {"a", a}, {"b", b}, {"ratio", ratio(a, b)}};
}

int64_t bytes_moved(const json& c) {
  return c["bytes_read"].get<int64_t>() + c["bytes_written"].get<int64_t>();
}

json metrics(const json& a, const json& b) {
  const json &ta = a["totals"], &tb = b["totals"];
  json rows = json::array();
  rows.push_back(metric("nodes", "nodes", a["model"]["nodes"], b["model"]["nodes"]));
  for (const auto& [key, name] :
       std::vector<std::pair<std::string, std::string>>{{"macs", "MACs"},
                                                        {"flops", "FLOPs"},
                                                        {"params", "parameters"},
                                                        {"weight_bytes", "weight bytes"},
                                                        {"peak_activation_bytes", "peak activation bytes"}})
    rows.push_back(metric(key, name, ta[key], tb[key]));
  rows.push_back(metric("bytes_moved", "bytes moved (read + written)", bytes_moved(ta), bytes_moved(tb)));
  rows.push_back(metric("arithmetic_intensity", "arithmetic intensity (FLOPs/byte)", ta["arithmetic_intensity"],
                        tb["arithmetic_intensity"]));
  for (const auto& [key, name] : std::vector<std::pair<std::string, std::string>>{
           {"median", "latency median (ms)"}, {"mean", "latency mean (ms)"}, {"min", "latency min (ms)"}})
    rows.push_back(metric("latency_" + key + "_ms", name, a["latency_ms"][key], b["latency_ms"][key]));
  rows.push_back(metric("gflops_per_s", "attained GFLOP/s", ta["gflops_per_s"], tb["gflops_per_s"]));
  if (ta.contains("roofline_ms") && tb.contains("roofline_ms")) {
    rows.push_back(metric("roofline_ms", "roofline time (ms, sum over ops)", ta["roofline_ms"], tb["roofline_ms"]));
    rows.push_back(
        metric("roofline_fraction", "fraction of roofline reached", ta["roofline_fraction"], tb["roofline_fraction"]));
  }
  return rows;
}

// Per op label: how many ops, what they cost, how long they took and the rate they
// attained in each side, from each report's op_types (zeros where a side has none).
json op_types(const json& a, const json& b) {
  std::map<std::string, std::pair<json, json>> by_label;
  for (const auto& [report, side] : {std::pair{&a, 0}, std::pair{&b, 1}})
    for (const json& t : (*report)["op_types"]) {
      auto& pair = by_label.try_emplace(t["type"].get<std::string>(), json::object(), json::object()).first->second;
      (side == 0 ? pair.first : pair.second) = t;
    }
  auto side_json = [](const json& t) {
    return json{{"count", t.value("count", int64_t{0})}, {"macs", t.value("macs", int64_t{0})},
                {"flops", t.value("flops", int64_t{0})}, {"bytes", t.value("bytes", int64_t{0})},
                {"ms", t.value("time_ms", 0.0)},         {"gflops_per_s", t.value("gflops_per_s", 0.0)}};
  };
  std::vector<std::pair<std::string, std::pair<json, json>>> rows(by_label.begin(), by_label.end());
  auto ms = [](const std::pair<json, json>& p) {
    return p.first.value("time_ms", 0.0) + p.second.value("time_ms", 0.0);
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& x, const auto& y) { return ms(x.second) > ms(y.second); });
  json out = json::array();
  for (const auto& [label, sides] : rows)
    out.push_back({{"type", label},
                   {"a", side_json(sides.first)},
                   {"b", side_json(sides.second)},
                   {"ms_ratio", ratio(sides.first.value("time_ms", 0.0), sides.second.value("time_ms", 0.0))}});
  return out;
}

// A node merged by a pass is named after the nodes it holds ("conv1+bn1").
std::vector<std::string> constituents(const std::string& name) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t plus = name.find('+'); plus != std::string::npos; plus = name.find('+', start)) {
    parts.push_back(name.substr(start, plus - start));
    start = plus + 1;
  }
  parts.push_back(name.substr(start));
  return parts;
}

json op_summary(const json& o) {
  return {{"name", o["name"]},     {"type", op_label(o)},     {"macs", o["macs"]},         {"flops", o["flops"]},
          {"params", o["params"]}, {"bytes", bytes_moved(o)}, {"ms", o["time_ms"]["mean"]}};
}

json sum_of(const json& ops) {
  int64_t macs = 0, flops = 0, params = 0, bytes = 0;
  double ms = 0;
  for (const json& o : ops) {
    macs += o["macs"].get<int64_t>();
    flops += o["flops"].get<int64_t>();
    params += o["params"].get<int64_t>();
    bytes += o["bytes"].get<int64_t>();
    ms += o["ms"].get<double>();
  }
  return {{"macs", macs}, {"flops", flops}, {"params", params}, {"bytes", bytes}, {"ms", ms}};
}

bool same_cost(const json& x, const json& y) {
  for (const char* k : {"macs", "flops", "params", "bytes_read", "bytes_written"})
    if (x[k] != y[k]) return false;
  return true;
}

// The nodes of one model that differ between two settings: ops of A and of B that share
// an original node (by the names passes give merged nodes) form one group; a group of
// one op on each side with the same name and cost is unchanged, every other is listed,
// with the cost and time of all listed ops together.
json node_changes(const json& a, const json& b) {
  const json &ops_a = a["ops"], &ops_b = b["ops"];
  const size_t na = ops_a.size(), n = na + ops_b.size();
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::map<std::string, size_t> holder;  // original node -> an op holding it
  for (size_t i = 0; i < n; ++i) {
    const json& o = i < na ? ops_a[i] : ops_b[i - na];
    for (const std::string& part : constituents(o["name"])) {
      auto [it, inserted] = holder.emplace(part, i);
      if (!inserted) parent[root(i)] = root(it->second);
    }
  }
  std::map<size_t, std::pair<std::vector<size_t>, std::vector<size_t>>> members;  // by root
  std::vector<size_t> order;                                                      // roots by first op
  for (size_t i = 0; i < n; ++i) {
    auto [it, inserted] = members.try_emplace(root(i));
    if (inserted) order.push_back(root(i));
    (i < na ? it->second.first : it->second.second).push_back(i);
  }
  json groups = json::array(), all_a = json::array(), all_b = json::array();
  for (size_t r : order) {
    const auto& [in_a, in_b] = members[r];
    if (in_a.size() == 1 && in_b.size() == 1) {
      const json &x = ops_a[in_a[0]], &y = ops_b[in_b[0] - na];
      if (x["name"] == y["name"] && same_cost(x, y)) continue;
    }
    json side_a = json::array(), side_b = json::array();
    for (size_t i : in_a) side_a.push_back(op_summary(ops_a[i]));
    for (size_t i : in_b) side_b.push_back(op_summary(ops_b[i - na]));
    all_a.insert(all_a.end(), side_a.begin(), side_a.end());
    all_b.insert(all_b.end(), side_b.begin(), side_b.end());
    groups.push_back({{"a", side_a}, {"b", side_b}, {"a_total", sum_of(side_a)}, {"b_total", sum_of(side_b)}});
  }
  return {{"groups", groups}, {"a_total", sum_of(all_a)}, {"b_total", sum_of(all_b)}};
}

// How far apart an A/A pair lands: two halves of each side's runs are one (same model,
// same settings, interleaved; build_report's halves_median_ratio), so the larger of their median ratios' distances from
// 1 is the noise floor a latency ratio must clear to mean anything.
json noise_json(const json& a, const json& b) {
  const json &ha = a["stability"]["halves_median_ratio"], &hb = b["stability"]["halves_median_ratio"];
  json noise = {{"a_halves_median_ratio", ha}, {"b_halves_median_ratio", hb}, {"floor", nullptr}};
  if (ha.is_null() || hb.is_null()) return noise;
  const double floor = std::max(std::abs(ha.get<double>() - 1.0), std::abs(hb.get<double>() - 1.0));
  const double a_ms = a["latency_ms"]["median"].get<double>(), b_ms = b["latency_ms"]["median"].get<double>();
  noise["floor"] = floor;
  noise["latency_ratio_beyond_floor"] = a_ms > 0 && std::abs(b_ms / a_ms - 1.0) > floor;
  return noise;
}

}  // namespace

json build_compare_report(const CompareSide& a, const CompareSide& b, const std::string& schedule) {
  const json &ra = a.report, &rb = b.report;
  json sides = json::array();
  for (const CompareSide* s : {&a, &b})
    sides.push_back({{"label", s->label}, {"spec", s->spec}, {"report", s->report}});
  const bool same_model = ra["model"]["file"] == rb["model"]["file"];
  json doc = {{"sides", sides},
              {"schedule", schedule},
              {"same_model", same_model},
              {"metrics", metrics(ra, rb)},
              {"op_types", op_types(ra, rb)},
              {"noise", noise_json(ra, rb)}};
  if (same_model) doc["node_changes"] = node_changes(ra, rb);
  return doc;
}

}  // namespace minfer
