// SVG charts of a report for the HTML page, drawn from the report's JSON alone: per-op
// time bars, the roofline, and the memory plan's buffer lifetimes.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minfer {

// One colour per op label ("Conv/depthwise"), in order of first appearance.
class OpColours {
 public:
  explicit OpColours(const nlohmann::json& ops);
  const std::string& of(const nlohmann::json& op) const;
  // The key, as HTML: a swatch and the label for each colour.
  std::string legend_html() const;

 private:
  std::map<std::string, std::string> colour_;
  std::vector<std::string> order_;
};

// Horizontal bars, one per op in run order, as long as its mean time.
std::string op_time_chart(const nlohmann::json& report, const OpColours& colours);

// Log-log GFLOP/s against FLOPs per byte: the memory roof (intensity x bandwidth), the
// measured and theoretical compute roofs (when the report has a machine), and every op
// with FLOPs as a point. Ops without FLOPs have no place on a log axis and are listed.
std::string roofline_chart(const nlohmann::json& report, const OpColours& colours);

// Each arena buffer as a rectangle: steps (its lifetime) across, bytes (its offset
// and size) up.
std::string memory_chart(const nlohmann::json& report);

// Text safe inside HTML and SVG elements and attributes.
std::string escape_html(const std::string& text);

}  // namespace minfer
