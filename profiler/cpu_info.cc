#include "profiler/cpu_info.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

namespace minfer {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  const size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// sysfs's "32K", "1024K", "32M" (or plain bytes).
int64_t size_bytes(const std::string& text) {
  char* end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (n <= 0) return 0;
  switch (*end) {
    case 'K': return n << 10;
    case 'M': return n << 20;
    case 'G': return n << 30;
    default: return n;
  }
}

}  // namespace

CacheSizes read_cache_sizes(const std::string& dir) {
  CacheSizes sizes;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.path().filename().string().starts_with("index")) continue;
    const std::string type = trim(read_file((entry.path() / "type").string()));
    if (type != "Data" && type != "Unified") continue;
    const int level = std::atoi(read_file((entry.path() / "level").string()).c_str());
    const int64_t bytes = size_bytes(trim(read_file((entry.path() / "size").string())));
    if (level == 1) sizes.l1 = bytes;
    if (level == 2) sizes.l2 = bytes;
    if (level == 3) sizes.l3 = bytes;
  }
  return sizes;
}

double load_average() {
  double load[1];
  return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

int logical_cpus() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

const CacheSizes& cache_sizes() {
  static const CacheSizes sizes = [] {
    CacheSizes s = read_cache_sizes("/sys/devices/system/cpu/cpu0/cache");
    for (auto [size, name] : {std::pair{&s.l1, _SC_LEVEL1_DCACHE_SIZE}, std::pair{&s.l2, _SC_LEVEL2_CACHE_SIZE},
                              std::pair{&s.l3, _SC_LEVEL3_CACHE_SIZE}})
      if (*size == 0) *size = std::max<long>(sysconf(name), 0);
    return s;
  }();
  return sizes;
}

CpuInfo parse_cpu_info(const std::string& text, long max_khz) {
  CpuInfo info;
  std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
  int processors = 0;
  std::string physical_id;
  double mhz = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "processor") {
      ++processors;
    } else if (key == "model name" && info.model == "unknown CPU") {
      info.model = value;
    } else if (key == "cpu MHz" && mhz == 0) {
      mhz = std::atof(value.c_str());
    } else if (key == "physical id") {
      physical_id = value;
    } else if (key == "core id") {
      cores.emplace(physical_id, value);
    } else if (key == "vendor_id" && info.vendor.empty()) {
      info.vendor = value;
    } else if (key == "cpu family" && info.family == 0) {
      info.family = std::atoi(value.c_str());
    }
  }
  // SMT siblings share one core's FMA units, so the formula counts physical cores.
  info.physical_cores = !cores.empty() ? static_cast<int>(cores.size()) : std::max(processors, 1);
  if (max_khz > 0) {
    info.clock_ghz = static_cast<double>(max_khz) / 1e6;
    info.clock_source = "cpufreq cpuinfo_max_freq";
  } else if (mhz > 0) {
    info.clock_ghz = mhz / 1e3;
    info.clock_source = "/proc/cpuinfo cpu MHz";
  }
  return info;
}

int CpuInfo::fma_units(int vector_bits) const {
  return vendor == "AuthenticAMD" && family == 25 && vector_bits >= 512 ? 1 : 2;
}

const CpuInfo& cpu_info() {
  static const CpuInfo info = [] {
    const std::string max_freq = read_file("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    const std::string text = read_file("/proc/cpuinfo");
    CpuInfo i = parse_cpu_info(text, std::atol(max_freq.c_str()));
    if (text.empty()) i.physical_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return i;
  }();
  return info;
}

}  // namespace minfer
