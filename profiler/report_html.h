// The report as one self-contained HTML page (inline CSS and SVG, no scripts, no
// fetches): summary, per-op time bars, roofline, memory plan and op table, rendered
// from the report's JSON only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minfer {

struct HtmlSection {
  std::string id, title, body;  // body: HTML
};

// The sections of one report's page. A page built from several reports (a
// comparison) adds its own sections and calls html_page with them all.
std::vector<HtmlSection> html_report_sections(const nlohmann::json& report);

std::string html_page(const std::string& title, const std::vector<HtmlSection>& sections);

// html_page of html_report_sections.
std::string format_html(const nlohmann::json& report);

}  // namespace minfer
