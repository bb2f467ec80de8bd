// The HTML page: self-contained, every section and chart present, and drawn from the
// JSON report alone.
#include <gtest/gtest.h>

#include <regex>

#include "engine/engine.h"
#include "tests/profiler/test_machine.h"

namespace minfer {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

nlohmann::json small_cnn_report() {
  auto model = compile(load_model(std::string(MINFER_SOURCE_DIR) + "/models/small_cnn.json"));
  Session s(model);
  s.run();
  s.run();
  return profile_report(s, 0, test::test_machine());
}

TEST(ReportHtml, HasEverySectionAndEveryOp) {
  const nlohmann::json r = small_cnn_report();
  const std::string html = format_html(r);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* id :
       {"id=\"summary\"", "id=\"op-times\"", "id=\"roofline\"", "id=\"memory\"", "id=\"ops\"", "id=\"op-time-chart\"",
        "id=\"roofline-chart\"", "id=\"memory-chart\"", "id=\"roof\"", "id=\"theoretical-roof\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  size_t with_flops = 0;
  for (const auto& op : r["ops"]) with_flops += op["flops"].get<int64_t>() > 0;
  EXPECT_EQ(count(html, "class=\"op-bar\""), r["ops"].size());
  EXPECT_EQ(count(html, "class=\"op-point\""), with_flops);
  EXPECT_EQ(count(html, "<rect class=\"buffer"), r["memory_plan"]["buffers"].size());
  // Flatten has no FLOPs: listed under the roofline instead of placed on it.
  EXPECT_NE(html.find("no place on a log axis): flat."), std::string::npos);
}

TEST(ReportHtml, FetchesNothing) {
  const std::string html = format_html(small_cnn_report());
  for (const char* s : {"<script", "<link", "src=", "@import", "url(", "https:"})
    EXPECT_EQ(html.find(s), std::string::npos) << s;
  // The only URL is SVG's namespace name, which is never fetched.
  const std::regex url("http://[^\"]*");
  for (std::sregex_iterator it(html.begin(), html.end(), url), end; it != end; ++it)
    EXPECT_EQ(it->str(), "http://www.w3.org/2000/svg");
}

TEST(ReportHtml, RendersTheNumbersOfTheJson) {
  nlohmann::json r = small_cnn_report();
  // Numbers no run would produce: the page must show them, so it reads them from the JSON.
  r["ops"][0]["time_ms"]["mean"] = 123.456;
  r["ops"][0]["roofline_fraction"] = 0.4321;
  r["machine"]["peak_gflops"] = 987.6;
  r["machine"]["theoretical"]["peak_gflops"] = 1234.5;
  r["totals"]["macs"] = 1234567890;
  const std::string html = format_html(r);
  for (const char* s : {">123.456<", "123.456 ms", "43.2%", "987.6 GFLOP/s", "1234.5 GFLOP/s", "1,234,567,890"})
    EXPECT_NE(html.find(s), std::string::npos) << s;
}

TEST(ReportHtml, ShowsTheClassification) {
  nlohmann::json r = small_cnn_report();
  r["classification"] = {
      {"image", "cat.png"},
      {"output", "prob"},
      {"top", {{{"index", 3}, {"label", "cat"}, {"score", 0.75}}, {{"index", 5}, {"label", ""}, {"score", 0.25}}}}};
  EXPECT_NE(format_html(r).find("cat.png -&gt; prob: cat 0.7500, class 5 0.2500"), std::string::npos);
}

TEST(ReportHtml, EscapesNames) {
  nlohmann::json r = small_cnn_report();
  r["ops"][0]["name"] = "<b>&\"x\"";
  const std::string html = format_html(r);
  EXPECT_EQ(html.find("<b>&"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;&amp;&quot;x&quot;"), std::string::npos);
}

TEST(ReportHtml, WithoutAMachineShowsPointsButNoRoof) {
  auto model = compile(load_model(std::string(MINFER_SOURCE_DIR) + "/models/small_cnn.json"));
  Session s(model);
  s.run();
  const std::string html = format_html(profile_report(s, 0));
  EXPECT_NE(html.find("No machine model"), std::string::npos);
  EXPECT_EQ(html.find("id=\"roof\""), std::string::npos);
  EXPECT_GT(count(html, "class=\"op-point\""), 0u);
}

}  // namespace
}  // namespace minfer
