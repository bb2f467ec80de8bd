// What the roofline needs to know about the machine: peak fp32 FLOP/s and the bandwidth
// of each cache level and of main memory for the thread count in use, measured
// (machine_probe.h), cached, or given by flags; the cache sizes that say which level an
// op's data fits in; beside them the theoretical peak by the formula in docs/profiling.md.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace minfer {

// Seed 001: peak = cores x clock x FLOPs per cycle, FLOPs per cycle = FMA units x 2
// (multiply and add) x vector bits / 32.
struct TheoreticalPeak {
  int cores = 1;             // physical cores the threads run on
  double clock_ghz = 0;      // 0 when the system does not say: no theoretical peak then
  std::string clock_source;  // where the clock was read
  int vector_bits = 128;     // the widest float vector of the instruction set in use
  // Not readable from the OS: CpuInfo::fma_units guesses from the vendor and family;
  // --fma_units overrides it.
  int fma_units = 2;

  int flops_per_cycle() const { return fma_units * 2 * vector_bits / 32; }
  double gflops() const { return cores * clock_ghz * flops_per_cycle(); }
};

// Where an op's data streams from, fastest first.
enum class MemoryLevel { kL1, kL2, kL3, kDram };
inline constexpr MemoryLevel kMemoryLevels[] = {MemoryLevel::kL1, MemoryLevel::kL2, MemoryLevel::kL3,
                                                MemoryLevel::kDram};
const char* memory_level_name(MemoryLevel level);  // "l1", "l2", "l3", "dram"

struct MachineModel {
  std::string cpu;  // model name
  std::string isa;  // instruction set of the probe, e.g. "fma3<avx2>"
  int threads = 1;
  double peak_gflops = 0;  // attainable fp32 GFLOP/s
  // Attainable GB/s of each level, indexed by MemoryLevel: L1, L2, L3, main memory.
  std::array<double, 4> bandwidth_gbs{};
  // Bytes each cache level holds for the threads in use, indexed by MemoryLevel: L1d and
  // L2 of one core times the cores the threads run on, the shared L3; 0 when unknown
  // (no op is placed there).
  std::array<int64_t, 3> cache_bytes{};
  // Where each figure came from: "probe", "cache" (an earlier probe) or "flag".
  std::string peak_source = "flag", bandwidth_source = "flag";
  TheoreticalPeak theoretical;

  double bandwidth(MemoryLevel level) const { return bandwidth_gbs[static_cast<size_t>(level)]; }
  // The fastest level whose capacity holds `working_set_bytes`, else main memory.
  MemoryLevel level_of(int64_t working_set_bytes) const;
  // FLOPs per byte above which an op whose data streams from `level` is compute-bound.
  double ridge_intensity(MemoryLevel level = MemoryLevel::kDram) const { return peak_gflops / bandwidth(level); }
};

nlohmann::json to_json(const MachineModel& machine);

struct MachineOptions {
  int threads = 1;
  // Given: not probed. A bandwidth given is every level's (one memory roof).
  std::optional<double> peak_gflops, bandwidth_gbs;
  int fma_units = 0;       // of the theoretical peak; 0: the CPU's (CpuInfo::fma_units)
  bool reprobe = false;    // ignore cached figures (and replace them)
  std::string cache_file;  // empty: no cache
  bool progress = false;   // say on stderr what is being probed
};

// Flags first, then the cache (keyed by CPU model, instruction set and thread count),
// then a probe whose results are written back to the cache. Throws UsageError for a
// figure given that is not positive.
MachineModel machine_model(const MachineOptions& options);

// $XDG_CACHE_HOME/minfer/machine.json, else ~/.cache/minfer/machine.json; empty when
// neither variable is set.
std::string default_machine_cache_file();

}  // namespace minfer
