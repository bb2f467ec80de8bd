// CSV rendering of the report: one row per op, for spreadsheets and scripts.
#include <fmt/format.h>

#include "profiler/report.h"

namespace minfer {

using nlohmann::json;

namespace {

// RFC 4180 quoting, for node names that contain commas or quotes.
std::string csv_field(const json& value) {
  const std::string s = value.get<std::string>();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::string format_csv(const json& r) {
  std::string out =
      "name,type,kind,output_shape,macs,flops,params,bytes_read,bytes_written,first_ms,mean_ms,min_ms,median_ms,"
      "max_ms,std_ms,percent,cdf_percent,gflops_per_s,arithmetic_intensity,gbytes_per_s,roofline_gflops_per_s,"
      "roofline_fraction,bound,memory_level\n";
  for (const json& o : r["ops"]) {
    const json& t = o["time_ms"];
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f}",
        csv_field(o["name"]), csv_field(o["type"]), csv_field(o["kind"]), shape_text(o["output_shape"]),
        o["macs"].get<int64_t>(), o["flops"].get<int64_t>(), o["params"].get<int64_t>(), o["bytes_read"].get<int64_t>(),
        o["bytes_written"].get<int64_t>(), t["first"].get<double>(), t["mean"].get<double>(), t["min"].get<double>(),
        t["median"].get<double>(), t["max"].get<double>(), t["std"].get<double>(), o["percent"].get<double>(),
        o["cdf_percent"].get<double>(), o["gflops_per_s"].get<double>(), o["arithmetic_intensity"].get<double>(),
        o["gbytes_per_s"].get<double>());
    // Roofline columns stay empty when the report was built without a machine model.
    if (o.contains("bound"))
      out += fmt::format(",{:.4f},{:.4f},{},{}\n", o["roofline_gflops_per_s"].get<double>(),
                         o["roofline_fraction"].get<double>(), o["bound"].get<std::string>(),
                         o["memory_level"].get<std::string>());
    else
      out += ",,,,\n";
  }
  return out;
}

}  // namespace minfer
