// What the roofline needs to know about the machine: peak fp32 FLOP/s and memory
// bandwidth for the thread count in use, measured (machine_probe.h), cached, or given
// by flags; beside them the theoretical peak by the formula in docs/profiling.md.
#pragma once

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
  // Not readable from the OS. 2 holds for AMD Zen 1-4 and Intel cores since Haswell
  // (Xeons with one AVX-512 unit have 1 for 512-bit vectors); --fma_units overrides it.
  int fma_units = 2;

  int flops_per_cycle() const { return fma_units * 2 * vector_bits / 32; }
  double gflops() const { return cores * clock_ghz * flops_per_cycle(); }
};

struct MachineModel {
  std::string cpu;  // model name
  std::string isa;  // instruction set of the probe, e.g. "fma3<avx2>"
  int threads = 1;
  double peak_gflops = 0;    // attainable fp32 GFLOP/s
  double bandwidth_gbs = 0;  // attainable memory GB/s
  // Where each figure came from: "probe", "cache" (an earlier probe) or "flag".
  std::string peak_source = "flag", bandwidth_source = "flag";
  TheoreticalPeak theoretical;

  // FLOPs per byte above which an op is compute-bound.
  double ridge_intensity() const { return peak_gflops / bandwidth_gbs; }
};

nlohmann::json to_json(const MachineModel& machine);

struct MachineOptions {
  int threads = 1;
  std::optional<double> peak_gflops, bandwidth_gbs;  // given: not probed
  int fma_units = 2;
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
