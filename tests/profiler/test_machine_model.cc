// The machine model: /proc/cpuinfo parsing, the seed's theoretical-peak formula, flags
// and the cache; one short smoke test runs the real probes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "graph/errors.h"
#include "profiler/cpu_info.h"
#include "profiler/machine_model.h"
#include "profiler/machine_probe.h"
#include "tests/temp_files.h"

namespace minfer {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(test::temp_dir("machine")) / name).string();
}

// Two sockets of two cores with two hardware threads each.
const char* kCpuinfo = R"(processor	: 0
model name	: Example CPU 9000
cpu MHz		: 2100.000
physical id	: 0
core id		: 0

processor	: 1
model name	: Example CPU 9000
cpu MHz		: 3300.000
physical id	: 0
core id		: 1

processor	: 2
physical id	: 0
core id		: 0

processor	: 3
physical id	: 0
core id		: 1

processor	: 4
physical id	: 1
core id		: 0

processor	: 5
physical id	: 1
core id		: 1

processor	: 6
physical id	: 1
core id		: 0

processor	: 7
physical id	: 1
core id		: 1
)";

TEST(CpuInfo, ParsesModelClockAndPhysicalCores) {
  const CpuInfo info = parse_cpu_info(kCpuinfo, 0);
  EXPECT_EQ(info.model, "Example CPU 9000");
  EXPECT_EQ(info.physical_cores, 4);      // 8 processors, 4 (socket, core) pairs
  EXPECT_DOUBLE_EQ(info.clock_ghz, 2.1);  // the first "cpu MHz"
  EXPECT_EQ(info.clock_source, "/proc/cpuinfo cpu MHz");
  const CpuInfo with_max = parse_cpu_info(kCpuinfo, 3'500'000);  // cpufreq's kHz wins
  EXPECT_DOUBLE_EQ(with_max.clock_ghz, 3.5);
  EXPECT_EQ(with_max.clock_source, "cpufreq cpuinfo_max_freq");
}

TEST(CpuInfo, WithoutCoreIdsCountsProcessors) {
  const CpuInfo info = parse_cpu_info("processor : 0\nprocessor : 1\nprocessor : 2\n", 0);
  EXPECT_EQ(info.physical_cores, 3);
  EXPECT_EQ(info.clock_ghz, 0.0);
  EXPECT_EQ(info.model, "unknown CPU");
  EXPECT_EQ(parse_cpu_info("", 0).physical_cores, 1);
}

TEST(TheoreticalPeak, SeedFormula) {
  // Seed 001's machine: 2 AVX-512 FMA units, 32 FLOPs/cycle in double, 64 in single.
  TheoreticalPeak avx512{1, 1.0, "seed", 512, 2};
  EXPECT_EQ(avx512.flops_per_cycle(), 64);
  // Zen 3, 2 cores at 2.45 GHz: 2 FMA units x 2 x 256 / 32 = 32 FLOPs/cycle, 156.8 GFLOP/s.
  TheoreticalPeak zen3{2, 2.45, "", 256, 2};
  EXPECT_EQ(zen3.flops_per_cycle(), 32);
  EXPECT_DOUBLE_EQ(zen3.gflops(), 156.8);
  TheoreticalPeak one_unit{2, 2.45, "", 256, 1};
  EXPECT_DOUBLE_EQ(one_unit.gflops(), 78.4);
}

TEST(MachineModel, FmaUnitsComeFromTheVendorAndFamily) {
  // /proc/cpuinfo excerpts: Zen 4 double-pumps 512-bit FMAs on its two 256-bit pipes.
  const CpuInfo zen = parse_cpu_info("vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n", 0);
  EXPECT_EQ(zen.vendor, "AuthenticAMD");
  EXPECT_EQ(zen.family, 25);
  EXPECT_EQ(zen.fma_units(512), 1);
  EXPECT_EQ(zen.fma_units(256), 2);
  const CpuInfo xeon = parse_cpu_info("vendor_id\t: GenuineIntel\ncpu family\t: 6\n", 0);
  EXPECT_EQ(xeon.fma_units(512), 2);
  EXPECT_EQ(CpuInfo{}.fma_units(256), 2) << "nothing said: the common case";
  // Unset, the theoretical peak takes this machine's; given, the flag's.
  MachineOptions o;
  o.peak_gflops = 100.0;
  o.bandwidth_gbs = 10.0;
  EXPECT_EQ(machine_model(o).theoretical.fma_units, cpu_info().fma_units(probe_isa().vector_bits));
  o.fma_units = 3;
  EXPECT_EQ(machine_model(o).theoretical.fma_units, 3);
}

TEST(MachineModel, FlagsNeedNoProbeAndNoCache) {
  const std::string cache = temp_path("minfer_machine_flags.json");
  MachineOptions o;
  o.threads = 2;
  o.peak_gflops = 123.0;
  o.bandwidth_gbs = 12.5;
  o.fma_units = 1;
  o.cache_file = cache;
  const MachineModel m = machine_model(o);
  const CacheSizes& caches = cache_sizes();
  EXPECT_EQ(m.cache_bytes,
            (std::array<int64_t, 3>{caches.l1 * m.theoretical.cores, caches.l2 * m.theoretical.cores, caches.l3}));
  EXPECT_EQ(m.peak_gflops, 123.0);
  for (MemoryLevel level : kMemoryLevels) EXPECT_EQ(m.bandwidth(level), 12.5) << "one roof for every level";
  EXPECT_EQ(m.peak_source, "flag");
  EXPECT_EQ(m.bandwidth_source, "flag");
  EXPECT_EQ(m.threads, 2);
  EXPECT_EQ(m.theoretical.fma_units, 1);
  EXPECT_EQ(m.theoretical.vector_bits, probe_isa().vector_bits);
  EXPECT_EQ(m.theoretical.cores, std::min(2, cpu_info().physical_cores));
  EXPECT_DOUBLE_EQ(m.ridge_intensity(), 123.0 / 12.5);
  EXPECT_FALSE(std::filesystem::exists(cache)) << "nothing was probed, so nothing is cached";
  const nlohmann::json j = to_json(m);
  for (const char* key : {"cpu", "isa", "threads", "peak_gflops", "peak_source", "bandwidth_gbs", "bandwidth_source",
                          "cache_bytes", "ridge_intensity", "theoretical"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"l1", "l2", "l3", "dram"}) EXPECT_EQ(j["bandwidth_gbs"][key], 12.5) << key;
  for (const char* key : {"l1", "l2", "l3"}) EXPECT_TRUE(j["cache_bytes"][key].is_number_integer()) << key;
  for (const char* key :
       {"cores", "clock_ghz", "vector_bits", "fma_units", "flops_per_cycle", "peak_gflops", "implied_clock_ghz"})
    EXPECT_TRUE(j["theoretical"].contains(key)) << key;
}

TEST(MachineModel, CachedFiguresAreUsedPerCpuAndThreadCount) {
  const std::string cache = temp_path("minfer_machine_cache.json");
  const std::string key = cpu_info().model + " / " + probe_isa().name;
  nlohmann::json doc;
  const nlohmann::json levels = {{"l1", 400.0}, {"l2", 190.0}, {"l3", 80.0}, {"dram", 19.0}};
  doc["machines"][key]["1"] = {{"peak_gflops", 77.0}, {"bandwidth_gbs", levels}};
  doc["machines"][key]["3"] = {{"peak_gflops", 211.0}, {"bandwidth_gbs", levels}};
  doc["machines"]["Some other CPU / sse2"]["1"] = {{"peak_gflops", 1.0}, {"bandwidth_gbs", 1.0}};
  std::ofstream(cache) << doc.dump();
  MachineOptions o;
  o.cache_file = cache;
  o.threads = 3;
  MachineModel m = machine_model(o);
  EXPECT_EQ(m.peak_gflops, 211.0);
  EXPECT_EQ(m.bandwidth_gbs, (std::array<double, 4>{400.0, 190.0, 80.0, 19.0}));
  EXPECT_EQ(m.peak_source, "cache");
  EXPECT_EQ(m.bandwidth_source, "cache");
  o.threads = 1;
  o.bandwidth_gbs = 9.5;  // a flag beats the cache
  m = machine_model(o);
  EXPECT_EQ(m.peak_gflops, 77.0);
  EXPECT_EQ(m.bandwidth(MemoryLevel::kL1), 9.5);
  EXPECT_EQ(m.bandwidth_source, "flag");
  std::filesystem::remove(cache);
}

TEST(MachineModel, DamagedCacheIsProbedAgainAndRewritten) {
  const std::string cache = temp_path("minfer_machine_damaged.json");
  MachineOptions o;
  o.cache_file = cache;
  o.bandwidth_gbs = 5.0;  // only the (short) FLOP/s probe runs
  for (const char* contents : {"not json at all {", "[1, 2]", "{\"machines\": 5}", "{\"machines\": {\"x\": []}}"}) {
    std::ofstream(cache) << contents;
    EXPECT_EQ(machine_model(o).peak_source, "probe") << contents;
    EXPECT_EQ(machine_model(o).peak_source, "cache") << contents;
  }
  std::filesystem::remove(cache);
}

TEST(MachineModel, ACacheThatIsNoRegularFileIsRefused) {
  const std::string dir = temp_path("minfer_machine_dir");
  std::filesystem::create_directories(dir);
  MachineOptions o;
  o.cache_file = dir;
  o.peak_gflops = 50.0;
  o.bandwidth_gbs = 5.0;
  EXPECT_NO_THROW(machine_model(o)) << "both figures given: the cache is not read";
  o.bandwidth_gbs.reset();
  try {
    machine_model(o);
    ADD_FAILURE() << "a directory was read as the cache";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "machine cache " + dir + ": is a directory, not a regular file");
  }
  // Larger than any cache: not read into memory.
  const std::string big = dir + "/big.json";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, 2 << 20);
  o.cache_file = big;
  try {
    machine_model(o);
    ADD_FAILURE() << "a 2 MiB file was read as the cache";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "machine cache " + big + ": the file is 2 MiB, more than a machine cache holds");
  }
  std::filesystem::remove_all(dir);
}

TEST(CacheSizes, ReadFromSysfsSkippingInstructionCaches) {
  const std::filesystem::path dir = temp_path("cache");
  const auto index = [&](int i, const char* level, const char* type, const char* size) {
    std::filesystem::create_directories(dir / ("index" + std::to_string(i)));
    std::ofstream(dir / ("index" + std::to_string(i)) / "level") << level << "\n";
    std::ofstream(dir / ("index" + std::to_string(i)) / "type") << type << "\n";
    std::ofstream(dir / ("index" + std::to_string(i)) / "size") << size << "\n";
  };
  index(0, "1", "Data", "48K");
  index(1, "1", "Instruction", "32K");
  index(2, "2", "Unified", "2048K");
  index(3, "3", "Unified", "105M");
  const CacheSizes sizes = read_cache_sizes(dir.string());
  EXPECT_EQ(sizes.l1, 48 << 10);
  EXPECT_EQ(sizes.l2, 2 << 20);
  EXPECT_EQ(sizes.l3, int64_t{105} << 20);
  const CacheSizes none = read_cache_sizes((dir / "absent").string());
  EXPECT_EQ(none.l1 + none.l2 + none.l3, 0);
}

TEST(MachineModel, AnOpIsPlacedInTheFirstLevelItsBytesFitIn) {
  MachineModel m;
  m.cache_bytes = {64 << 10, 2 << 20, 32 << 20};  // two cores of 32 KiB L1d and 1 MiB L2; 32 MiB L3
  EXPECT_EQ(m.level_of(0), MemoryLevel::kL1);
  EXPECT_EQ(m.level_of(64 << 10), MemoryLevel::kL1);
  EXPECT_EQ(m.level_of((64 << 10) + 1), MemoryLevel::kL2);
  EXPECT_EQ(m.level_of(2 << 20), MemoryLevel::kL2);
  EXPECT_EQ(m.level_of(32 << 20), MemoryLevel::kL3);
  EXPECT_EQ(m.level_of((32 << 20) + 1), MemoryLevel::kDram);
  m.cache_bytes = {0, 0, 0};  // sizes unknown: every op against main memory
  EXPECT_EQ(m.level_of(1), MemoryLevel::kDram);
  // The working sets the probe streams sit in their level: half of it, and past the one before.
  const auto sets = triad_working_sets({32 << 10, 1 << 20, 32 << 20}, 2);
  EXPECT_EQ(sets, (std::array<int64_t, 4>{32 << 10, 1 << 20, 16 << 20, int64_t{96} << 20}));
  EXPECT_EQ(triad_working_sets({}, 1)[2], 4 << 20) << "an unknown L3 taken as 8 MiB";
}

TEST(MachineModel, DefaultCacheFileFollowsXdg) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", "/some/cache", 1);
  EXPECT_EQ(default_machine_cache_file(), "/some/cache/minfer/machine.json");
  if (old)
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
}

// The one test that measures: short, and it only checks the figures are plausible.
TEST(MachineModel, ProbeSmokeTest) {
  const std::string cache = temp_path("minfer_machine_probe.json");
  std::filesystem::remove(cache);
  MachineOptions o;
  o.cache_file = cache;
  o.reprobe = true;
  o.threads = 2;  // the parallel path, where a thread waiting for a core must not skew the passes
  const MachineModel probed = machine_model(o);
  EXPECT_EQ(probed.peak_source, "probe");
  EXPECT_EQ(probed.bandwidth_source, "probe");
  // One core does at least one float FLOP per ns (any x86-64 since SSE2) and no more
  // than 32 FMAs of 16 lanes per cycle at 6 GHz; memory moves 0.1 to 1000 GB/s.
  EXPECT_GT(probed.peak_gflops, 1.0);
  EXPECT_LT(probed.peak_gflops, 6.0 * 32 * 16 * 2);
  for (MemoryLevel level : kMemoryLevels) {
    EXPECT_GT(probed.bandwidth(level), 0.1) << memory_level_name(level);
    EXPECT_LT(probed.bandwidth(level), 10000.0) << memory_level_name(level);
  }
  // (Their order is CacheRoofline's test.)
  o.reprobe = false;
  const MachineModel cached = machine_model(o);  // written back by the probe
  EXPECT_EQ(cached.peak_source, "cache");
  EXPECT_EQ(cached.bandwidth_source, "cache");
  EXPECT_EQ(cached.peak_gflops, probed.peak_gflops);
  EXPECT_EQ(cached.bandwidth_gbs, probed.bandwidth_gbs);
  std::filesystem::remove(cache);
}

}  // namespace
}  // namespace minfer
