#include "profiler/machine_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "graph/errors.h"
#include "graph/input_file.h"
#include "graph/memory_limit.h"
#include "graph/output_files.h"
#include "profiler/cpu_info.h"
#include "profiler/machine_probe.h"

namespace minfer {

using nlohmann::json;

namespace {

// More than any machine's entries take (a few hundred bytes per thread count): a file
// that large is not a cache, and is not read into memory.
constexpr uint64_t kMaxCacheBytes = 1 << 20;

json read_cache(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return json::object();  // not probed yet
  std::string text;
  try {
    const InputFile file(path);
    if (file.size() > kMaxCacheBytes)
      throw UsageError(fmt::format("machine cache {}: the file is {}, more than a machine cache holds", path,
                                   format_bytes(static_cast<int64_t>(std::min<uint64_t>(file.size(), INT64_MAX)))));
    text = file.read_all();
  } catch (const FileError& e) {
    throw UsageError(fmt::format("machine cache {}", e.what()));
  }
  // A damaged cache is not an error: it is probed again and rewritten.
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : json::object();
}

// parent[key], made an object if it is anything else (a hand-edited or damaged cache).
json& object_at(json& parent, const std::string& key) {
  json& child = parent[key];
  if (!child.is_object()) child = json::object();
  return child;
}

void write_cache(const std::string& path, const json& cache) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  try {
    write_files({{path, cache.dump(2) + "\n"}});
  } catch (const UsageError&) {
    // A cache that cannot be written costs a probe next time, nothing else.
  }
}

// The cached bandwidth of every level, when the entry has them all (an entry written
// before the cache levels were probed has one number: it is probed again).
bool cached_levels(const json& entry, std::array<double, 4>& gbs) {
  if (!entry.contains("bandwidth_gbs") || !entry["bandwidth_gbs"].is_object()) return false;
  const json& levels = entry["bandwidth_gbs"];
  for (MemoryLevel level : kMemoryLevels) {
    const char* name = memory_level_name(level);
    if (!levels.contains(name) || !levels[name].is_number() || !(levels[name].get<double>() > 0)) return false;
    gbs[static_cast<size_t>(level)] = levels[name];
  }
  return true;
}

}  // namespace

const char* memory_level_name(MemoryLevel level) {
  switch (level) {
    case MemoryLevel::kL1: return "l1";
    case MemoryLevel::kL2: return "l2";
    case MemoryLevel::kL3: return "l3";
    case MemoryLevel::kDram: break;
  }
  return "dram";
}

MemoryLevel MachineModel::level_of(int64_t working_set_bytes) const {
  for (size_t i = 0; i < cache_bytes.size(); ++i)
    if (working_set_bytes <= cache_bytes[i]) return kMemoryLevels[i];
  return MemoryLevel::kDram;
}

json to_json(const MachineModel& m) {
  const TheoreticalPeak& t = m.theoretical;
  json bandwidth = json::object(), caches = json::object();
  for (MemoryLevel level : kMemoryLevels) {
    bandwidth[memory_level_name(level)] = m.bandwidth(level);
    if (level != MemoryLevel::kDram) caches[memory_level_name(level)] = m.cache_bytes[static_cast<size_t>(level)];
  }
  return {{"cpu", m.cpu},
          {"isa", m.isa},
          {"threads", m.threads},
          {"peak_gflops", m.peak_gflops},
          {"peak_source", m.peak_source},
          {"bandwidth_gbs", bandwidth},
          {"bandwidth_source", m.bandwidth_source},
          {"cache_bytes", caches},
          {"ridge_intensity", m.ridge_intensity()},  // main memory's
          {"theoretical",
           {{"cores", t.cores},
            {"clock_ghz", t.clock_ghz},
            {"clock_source", t.clock_source},
            {"vector_bits", t.vector_bits},
            {"fma_units", t.fma_units},
            {"flops_per_cycle", t.flops_per_cycle()},
            {"peak_gflops", t.gflops()},
            // The clock at which the formula gives the measured peak: above clock_ghz when
            // the cores boost past the clock the OS reports (typical in virtual machines).
            {"implied_clock_ghz", m.peak_gflops / (t.cores * t.flops_per_cycle())}}}};
}

MachineModel machine_model(const MachineOptions& o) {
  // The command line checks these too; callers of the library (the Python module) get the same refusal here.
  for (const auto& [name, value] :
       {std::pair{"peak_gflops", o.peak_gflops}, std::pair{"bandwidth_gbs", o.bandwidth_gbs}})
    if (value && !(*value > 0)) throw UsageError(fmt::format("{} must be positive, got {}", name, *value));
  if (o.fma_units < 0)
    throw UsageError(fmt::format("fma_units must be at least 1 (0: the CPU's), got {}", o.fma_units));
  const CpuInfo& cpu = cpu_info();
  const ProbeIsa isa = probe_isa();
  MachineModel m;
  m.cpu = cpu.model;
  m.isa = isa.name;
  m.threads = o.threads;
  m.theoretical = {std::min(o.threads, cpu.physical_cores), cpu.clock_ghz, cpu.clock_source, isa.vector_bits,
                   o.fma_units > 0 ? o.fma_units : cpu.fma_units(isa.vector_bits)};
  // Each thread's share of an op's data sits in its own core's L1 and L2.
  const CacheSizes& caches = cache_sizes();
  m.cache_bytes = {caches.l1 * m.theoretical.cores, caches.l2 * m.theoretical.cores, caches.l3};

  const std::string machine_key = cpu.model + " / " + isa.name;
  const std::string threads_key = std::to_string(o.threads);
  // Figures given by both flags need no cache, not even a readable one.
  const bool cached = !o.cache_file.empty() && !(o.peak_gflops && o.bandwidth_gbs);
  json cache = cached ? read_cache(o.cache_file) : json::object();
  json& entry = object_at(object_at(object_at(cache, "machines"), machine_key), threads_key);
  const auto progress = [&](const char* what) {
    if (o.progress) std::cerr << "probing " << what << " on " << o.threads << " thread(s)...\n";
  };
  if (o.peak_gflops) {
    m.peak_gflops = *o.peak_gflops;
  } else if (!o.reprobe && entry.contains("peak_gflops") && entry["peak_gflops"].is_number() &&
             entry["peak_gflops"].get<double>() > 0) {
    m.peak_gflops = entry["peak_gflops"];
    m.peak_source = "cache";
  } else {
    progress("peak FLOP/s");
    m.peak_gflops = probe_peak_gflops(o.threads);
    m.peak_source = "probe";
    entry["peak_gflops"] = m.peak_gflops;
  }
  if (o.bandwidth_gbs) {
    m.bandwidth_gbs.fill(*o.bandwidth_gbs);
  } else if (!o.reprobe && cached_levels(entry, m.bandwidth_gbs)) {
    m.bandwidth_source = "cache";
  } else {
    progress("the bandwidth of L1, L2, L3 and memory");
    m.bandwidth_gbs = probe_bandwidth_gbs(o.threads, caches);
    m.bandwidth_source = "probe";
    json levels = json::object();
    for (MemoryLevel level : kMemoryLevels) levels[memory_level_name(level)] = m.bandwidth(level);
    entry["bandwidth_gbs"] = levels;
  }
  if (!o.cache_file.empty() && (m.peak_source == "probe" || m.bandwidth_source == "probe"))
    write_cache(o.cache_file, cache);
  return m;
}

std::string default_machine_cache_file() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (std::filesystem::path(xdg) / "minfer" / "machine.json").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (std::filesystem::path(home) / ".cache" / "minfer" / "machine.json").string();
  return "";
}

}  // namespace minfer
