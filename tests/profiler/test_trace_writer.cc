// The Chrome/Perfetto trace: one complete event per op per run, in order, placed where
// the op ran, carrying the report's cost figures.
#include <gtest/gtest.h>

#include "engine/engine.h"

namespace minfer {
namespace {

TEST(TraceWriter, OneCompleteEventPerOpPerRunInOrder) {
  auto model = compile(load_model(std::string(MINFER_SOURCE_DIR) + "/models/small_cnn.json"));
  Session s(model);
  constexpr int kRuns = 3;
  for (int i = 0; i < kRuns; ++i) s.run();
  const nlohmann::json report = profile_report(s, 0);
  const nlohmann::json trace = nlohmann::json::parse(format_trace(report, s.profile()));

  const auto& ops = report["ops"];
  const size_t n = ops.size();
  ASSERT_EQ(n, model->steps().size());
  std::vector<nlohmann::json> events;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X")
      events.push_back(e);
    else
      EXPECT_EQ(e["ph"], "M");  // only metadata besides: process and thread names
  }
  ASSERT_EQ(events.size(), kRuns * n);
  const auto& timeline = s.profile().timeline();
  double previous_end = -1;
  for (size_t r = 0; r < kRuns; ++r) {
    for (size_t i = 0; i < n; ++i) {
      SCOPED_TRACE(testing::Message() << "run " << r << " op " << i);
      const auto& e = events[r * n + i];
      const auto& op = ops[i];
      EXPECT_EQ(e["name"], op["name"]);
      EXPECT_EQ(e["cat"], op_label(op));
      EXPECT_EQ(e["pid"], 1);
      EXPECT_EQ(e["tid"], 1);
      EXPECT_EQ(e["args"]["run"], r);
      for (const char* key : {"macs", "flops", "params", "bytes_read", "bytes_written", "arithmetic_intensity"})
        EXPECT_EQ(e["args"][key], op[key]) << key;
      const double ts = e["ts"], dur = e["dur"];
      // Microseconds; the duration is exactly the step's recorded time.
      EXPECT_DOUBLE_EQ(dur, timeline[r].step_ms[i] * 1e3);
      EXPECT_GE(dur, 0.0);
      // Ops follow one another without overlap, and each run after the one before.
      EXPECT_GE(ts, previous_end - 1e-6);
      if (i > 0) {
        EXPECT_NEAR(ts, previous_end, 1e-3);  // steps run back to back
      }
      previous_end = ts + dur;
    }
  }
  EXPECT_DOUBLE_EQ(events[0]["ts"].get<double>(), 0.0);  // the first run starts the time line
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
}

TEST(TraceWriter, RefusesAReportOfOtherRuns) {
  auto model = compile(load_model(std::string(MINFER_SOURCE_DIR) + "/models/small_cnn.json"));
  Session s(model);
  s.run();
  const nlohmann::json one_run = profile_report(s, 0);
  s.run();
  EXPECT_THROW(format_trace(one_run, s.profile()), std::invalid_argument);
}

}  // namespace
}  // namespace minfer
