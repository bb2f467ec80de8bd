// What the operating system says about the CPU: model name, clock and physical core
// count, the inputs of the theoretical-peak formula (machine_model.h).
#pragma once

#include <string>

namespace minfer {

struct CpuInfo {
  std::string model = "unknown CPU";
  double clock_ghz = 0;      // 0 when the system does not say
  std::string clock_source;  // where clock_ghz came from
  int physical_cores = 1;
};

// Parses the text of /proc/cpuinfo; `max_khz` is cpufreq's cpuinfo_max_freq in kHz (0 if
// absent), preferred over "cpu MHz", which is the current clock of a possibly idle core.
CpuInfo parse_cpu_info(const std::string& proc_cpuinfo, long max_khz);

// This machine's CPU, read once.
const CpuInfo& cpu_info();

}  // namespace minfer
