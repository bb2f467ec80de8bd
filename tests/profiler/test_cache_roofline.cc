// The cache-aware roofline on ops of known working set: a Relu reads and writes n floats
// (8n bytes), so which level it is held to follows from the cache sizes alone, and a
// kernel that streams its bytes cannot beat the bandwidth the probe measured at that
// level by more than the noise of a shared machine. One probe for the suite.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "profiler/machine_model.h"
#include "tests/temp_files.h"

namespace minfer {
namespace {

const MachineModel& probed_machine() {
  static const MachineModel m = [] {
    MachineOptions o;
    o.cache_file = (std::filesystem::path(test::temp_dir("cache_roofline")) / "machine.json").string();
    return machine_model(o);
  }();
  return m;
}

// The report's op of a graph of one Relu over n floats, after `runs` runs.
nlohmann::json relu_op(int64_t n, int runs) {
  Graph g;
  g.source = "<relu>";
  g.inputs.push_back({"x", {1, n}});
  g.outputs = {"y"};
  g.nodes.push_back({"relu", "Relu", {"x"}, {"y"}, {}});
  auto model = compile(g);
  Session s(model);
  for (int i = 0; i < runs; ++i) s.run();
  return profile_report(s, 0, probed_machine())["ops"][0];
}

// Run-to-run noise on a machine shared with other processes: the probe keeps its fastest
// pass, but a pass every one of which another process slowed is slower than the hardware.
constexpr double kNoise = 1.3;

TEST(CacheRoofline, EachReluIsHeldToTheRoofOfTheLevelItFitsIn) {
  const MachineModel& m = probed_machine();
  const nlohmann::json j = to_json(m);
  // 1,024 floats: 8 KiB moved, within the L1d of any x86-64 core (32 KiB or more).
  const nlohmann::json small = relu_op(1024, 200);
  EXPECT_EQ(small["bytes_read"].get<int64_t>() + small["bytes_written"].get<int64_t>(), 8192);
  if (m.cache_bytes[0] >= 8192) {
    EXPECT_EQ(small["memory_level"], "l1");
  }
  // 48 Ki floats: 384 KiB moved, past any L1d (at most 48 KiB a core on 2 cores), in every L2 of 512 KiB or more.
  const nlohmann::json middle = relu_op(48 << 10, 100);
  EXPECT_EQ(middle["memory_level"], memory_level_name(m.level_of(384 << 10)));
  if (m.cache_bytes[0] < (384 << 10) && m.cache_bytes[1] >= (384 << 10)) {
    EXPECT_EQ(middle["memory_level"], "l2");
  }
  // 32 Mi floats: 256 MiB moved, more than any L3 a core shares today.
  const nlohmann::json large = relu_op(32 << 20, 5);
  if (m.cache_bytes[2] < (256 << 20)) {
    EXPECT_EQ(large["memory_level"], "dram");
  }
  for (const nlohmann::json* op : {&small, &middle, &large}) {
    const double roof = j["bandwidth_gbs"][(*op)["memory_level"].get<std::string>()];
    EXPECT_EQ((*op)["bound"], "memory");
    EXPECT_LE((*op)["roofline_fraction"].get<double>(), kNoise)
        << (*op)["memory_level"] << " roof " << roof << " GB/s, attained " << (*op)["gbytes_per_s"] << " GB/s";
    EXPECT_GT((*op)["roofline_fraction"].get<double>(), 0.0);
  }
}

TEST(CacheRoofline, ProbedLevelsAreOrderedWithinNoise) {
  const MachineModel& m = probed_machine();
  for (size_t i = 0; i + 1 < m.bandwidth_gbs.size(); ++i)
    EXPECT_GE(m.bandwidth_gbs[i] * kNoise, m.bandwidth_gbs[i + 1])
        << memory_level_name(kMemoryLevels[i]) << " " << m.bandwidth_gbs[i] << " GB/s against "
        << memory_level_name(kMemoryLevels[i + 1]) << " " << m.bandwidth_gbs[i + 1] << " GB/s";
}

}  // namespace
}  // namespace minfer
