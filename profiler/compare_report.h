// A comparison of two profile reports (engine_bench --compare A B): the figures of both
// side by side with the ratio B/A, time by op type, and on one model under two settings
// the nodes that differ. build_compare_report makes the one JSON document; the text,
// CSV and HTML writers only render it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace minfer {

struct CompareSide {
  std::string label;      // "A" or "B"
  std::string spec;       // the side as the user gave it, e.g. "--fold_bn 0"
  nlohmann::json report;  // build_report's document of the side's runs
};

// `schedule` says how the runs of the two sides were ordered.
nlohmann::json build_compare_report(const CompareSide& a, const CompareSide& b, const std::string& schedule);

std::string format_compare_text(const nlohmann::json& comparison);
// The comparison's noise floor in one sentence (text and HTML).
std::string noise_text(const nlohmann::json& comparison);
std::string format_compare_csv(const nlohmann::json& comparison);
// One self-contained page: the comparison's table and charts, then each side's report.
std::string format_compare_html(const nlohmann::json& comparison);

}  // namespace minfer
