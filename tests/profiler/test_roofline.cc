// Throughput and roofline figures against numbers worked out by hand.
#include <gtest/gtest.h>

#include "profiler/roofline.h"

namespace minfer {
namespace {

MachineModel machine(double peak_gflops, double bandwidth_gbs) {
  MachineModel m;
  m.peak_gflops = peak_gflops;
  m.bandwidth_gbs.fill(bandwidth_gbs);
  return m;
}

Cost cost(int64_t flops, int64_t bytes_read, int64_t bytes_written) {
  Cost c;
  c.flops = flops;
  c.bytes_read = bytes_read;
  c.bytes_written = bytes_written;
  return c;
}

TEST(Roofline, ThroughputByHand) {
  // 3e9 FLOPs over 1e9 bytes in 500 ms: 3 FLOPs/byte, 6 GFLOP/s, 2 GB/s.
  const Throughput t = throughput(cost(3'000'000'000, 600'000'000, 400'000'000), 500.0);
  EXPECT_DOUBLE_EQ(t.intensity, 3.0);
  EXPECT_DOUBLE_EQ(t.gflops_per_s, 6.0);
  EXPECT_DOUBLE_EQ(t.gbytes_per_s, 2.0);
  const Throughput unmeasured = throughput(cost(10, 5, 5), 0.0);
  EXPECT_DOUBLE_EQ(unmeasured.intensity, 1.0);
  EXPECT_EQ(unmeasured.gflops_per_s, 0.0);
  EXPECT_EQ(throughput(cost(0, 0, 0), 1.0).intensity, 0.0);
}

TEST(Roofline, ComputeBoundAboveTheRidge) {
  // Peak 100 GFLOP/s, 10 GB/s: ridge at 10 FLOPs/byte. 2e9 FLOPs over 1e8 bytes (20 per
  // byte): at least 2e9 / 100e9 s = 20 ms of compute, 1e8 / 10e9 s = 10 ms of memory.
  const RooflineBound r = roofline_bound(cost(2'000'000'000, 60'000'000, 40'000'000), 40.0, machine(100, 10));
  EXPECT_TRUE(r.compute_bound);
  EXPECT_DOUBLE_EQ(r.ms, 20.0);
  EXPECT_DOUBLE_EQ(r.gflops_per_s, 100.0);
  EXPECT_DOUBLE_EQ(r.fraction, 0.5);  // 20 ms allowed, 40 ms taken
}

TEST(Roofline, MemoryBoundBelowTheRidge) {
  // 1e6 FLOPs over 8e6 bytes (0.125 per byte): 0.01 ms of compute, 0.8 ms of memory; the
  // roof there is 0.125 x 10 = 1.25 GFLOP/s.
  const RooflineBound r = roofline_bound(cost(1'000'000, 4'000'000, 4'000'000), 2.0, machine(100, 10));
  EXPECT_FALSE(r.compute_bound);
  EXPECT_DOUBLE_EQ(r.ms, 0.8);
  EXPECT_DOUBLE_EQ(r.gflops_per_s, 1.25);
  EXPECT_DOUBLE_EQ(r.fraction, 0.4);
}

TEST(Roofline, OpsWithoutFlopsAreMemoryBound) {
  // A reshape-like copy: 0 FLOPs, 4e6 bytes: 0.4 ms at 10 GB/s.
  const RooflineBound r = roofline_bound(cost(0, 2'000'000, 2'000'000), 0.8, machine(100, 10));
  EXPECT_FALSE(r.compute_bound);
  EXPECT_DOUBLE_EQ(r.ms, 0.4);
  EXPECT_EQ(r.gflops_per_s, 0.0);
  EXPECT_DOUBLE_EQ(r.fraction, 0.5);
  EXPECT_EQ(roofline_bound(cost(0, 0, 0), 1.0, machine(100, 10)).fraction, 0.0);
}

TEST(Roofline, RidgeIsPeakOverBandwidth) {
  EXPECT_DOUBLE_EQ(machine(140, 14).ridge_intensity(), 10.0);
}

}  // namespace
}  // namespace minfer
