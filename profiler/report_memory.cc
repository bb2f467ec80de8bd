// The memory plan as text (engine_bench --memory_plan): each arena buffer's offset,
// size and lifetime, and an ASCII chart of lifetimes over the steps. Ops that plan their
// own internal buffers (details.cell_buffers: the LSTM cell) are shown the same way.
#include <fmt/format.h>

#include <algorithm>

#include "profiler/report.h"

namespace minfer {

using nlohmann::json;

namespace {

void buffer_table(std::string& out, const json& buffers, const std::string& step_label) {
  std::vector<const json*> rows;
  for (const json& b : buffers) rows.push_back(&b);
  std::stable_sort(rows.begin(), rows.end(), [](const json* a, const json* b) {
    return (*a)["offset"].get<int64_t>() < (*b)["offset"].get<int64_t>();
  });
  int last_step = 0;
  for (const json* b : rows) last_step = std::max(last_step, (*b)["last_step"].get<int>());
  const int steps = last_step + 1;
  // One chart column per step, or per group of steps when there are more than 64.
  const int per_column = (steps + 63) / 64;
  const int columns = (steps + per_column - 1) / per_column;

  out += fmt::format("{:>12} {:>12} {:>6} {:>6}  {:<{}}  {}\n", "[offset]", "[bytes]", "[first]", "[last]",
                     "[lifetime]", columns, "[tensors]");
  for (const json* bp : rows) {
    const json& b = *bp;
    const int first = b["first_step"], last = b["last_step"];
    std::string bar(columns, '.');
    for (int s = first; s <= last; ++s) bar[s / per_column] = '#';
    std::string names;
    const json& tensors = b.contains("tensors") ? b["tensors"] : json::array({b["name"]});
    for (const json& t : tensors) names += (names.empty() ? "" : " = ") + t.get<std::string>();
    out += fmt::format("{:>12} {:>12} {:>6} {:>6}  {}  {}\n", with_commas(b["offset"]), with_commas(b["bytes"]), first,
                       last, bar, names);
  }
  out += fmt::format("{:>12} {:>12} {:>6} {:>6}  {}\n", "", "", "", "",
                     fmt::format("one column = {} {}{}", per_column, step_label, per_column > 1 ? "s" : ""));
}

}  // namespace

std::string format_memory_plan(const json& r) {
  std::string out = "============================== Memory plan ==============================\n";
  const json& plan = r["memory_plan"];
  const double arena = plan["arena_bytes"].get<double>();
  out += fmt::format(
      "Arena: {} bytes; lower bound (most bytes alive at one step) {}; every tensor its own buffer {} "
      "({:.1f}x the arena)\n",
      with_commas(plan["arena_bytes"]), with_commas(plan["lower_bound_bytes"]), with_commas(plan["naive_bytes"]),
      arena > 0 ? plan["naive_bytes"].get<double>() / arena : 0.0);
  buffer_table(out, plan["buffers"], "step");
  // Any op detail that is a list of buffers with offsets and lifetimes (e.g. the LSTM
  // cell's cell_buffers) is drawn the same way.
  for (const json& op : r["ops"]) {
    for (const auto& item : op["details"].items()) {
      const json& v = item.value();
      if (!v.is_array() || v.empty() || !v[0].is_object() || !v[0].contains("offset") || !v[0].contains("first_step"))
        continue;
      out += fmt::format("\nInside {} ({}): {}\n", op["name"].get<std::string>(), op["type"].get<std::string>(),
                         item.key());
      buffer_table(out, v, "sub-step");
    }
  }
  return out;
}

}  // namespace minfer
