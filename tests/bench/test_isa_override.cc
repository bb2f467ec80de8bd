// MINFER_ISA as a user sets it: every kernel family runs the forced target, which the
// report names (kernel_isa, each op's kernel, the probe's instruction set), and a value
// the CPU cannot run or that names no target is refused by the tools in one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "profiler/isa.h"
#include "tests/cli_test_util.h"
#include "tests/temp_files.h"

namespace minfer::test {
namespace {

const std::string kBench = MINFER_ENGINE_BENCH;
const std::string kCheck = MINFER_ENGINE_CHECK;
const std::string kSource = MINFER_SOURCE_DIR;

// `env` prefix (e.g. "MINFER_ISA=avx2", or "-u MINFER_ISA"), then engine_bench's JSON
// report of `model`; machine figures given, so nothing is probed.
nlohmann::json report(const std::string& env, const std::string& model) {
  const CommandResult r =
      run_command("env " + env + " " + kBench + " --model " + kSource + "/models/" + model +
                  " --num_runs 1 --warmup_runs 0 --format json --peak_gflops 100 --bandwidth_gbs 10");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

const char* probe_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512f";
    case Isa::kAvx2: return "fma3+avx2";
    case Isa::kScalar: break;
  }
  return "sse2";
}

// Models that between them run every kernel family: the direct small-channel convolution,
// the blocked direct convolution and max pool (small_cnn; the scalar target runs im2col
// GEMM and pools in the generic loop), the depthwise and direct pointwise kernels (the
// separable pair; the pointwise GEMM on the scalar target), the LSTM's GEMMs and vector
// activations.
const char* const kModels[] = {"small_cnn.json", "seed/depthwise_separable.json", "lstm.json"};

TEST(IsaOverride, ForcesEveryKernelFamilyAndTheReportNamesIt) {
  for (Isa isa : runnable_isas()) {
    const std::string name = isa_name(isa);
    std::set<std::string> kernels_seen;
    for (const char* model : kModels) {
      const nlohmann::json r = report("MINFER_ISA=" + name, model);
      if (r.empty()) return;
      EXPECT_EQ(r["kernel_isa"], name) << model;
      EXPECT_EQ(r["machine"]["isa"], probe_name(isa)) << model;
      for (const nlohmann::json& op : r["ops"])
        for (const char* key : {"variant", "gemm_kernel", "activation_kernel"}) {
          if (!op["details"].contains(key)) continue;
          const std::string kernel = op["details"][key];
          EXPECT_TRUE(kernel.ends_with("_" + name)) << model << " " << op["name"] << ": " << kernel;
          kernels_seen.insert(kernel.substr(0, kernel.find('_', kernel.find('_') + 1)));
        }
    }
    std::set<std::string> families = {"depthwise_f32", "direct_conv", "gemm_f32", "vector_activations"};
    if (isa != Isa::kScalar) families.insert({"max_pool", "blocked_conv", "pointwise_f32"});
    EXPECT_EQ(kernels_seen, families) << name;
  }
}

TEST(IsaOverride, UnsetOrEmptyRunsTheBestTarget) {
  const std::string best = isa_name(runnable_isas().front());
  EXPECT_EQ(report("-u MINFER_ISA", "small_cnn.json")["kernel_isa"], best);
  EXPECT_EQ(report("MINFER_ISA=", "small_cnn.json")["kernel_isa"], best);
}

// One line on stderr, a non-zero exit, nothing on stdout and no output file.
void expect_refused(const std::string& value, const std::string& cause) {
  const std::filesystem::path out = test::temp_dir(value.empty() ? "empty" : value) + "/report.json";
  const std::string env = "env 'MINFER_ISA=" + value + "' ";
  const CommandResult bench = run_command(env + kBench + " --model " + kSource +
                                          "/models/small_cnn.json --num_runs 1 --output " + out.string());
  EXPECT_NE(bench.exit_code, 0);
  EXPECT_EQ(bench.out, "");
  EXPECT_EQ(bench.err, "engine_bench: MINFER_ISA=" + cause + "\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  const CommandResult check = run_command(env + kCheck + " " + kSource + "/models");
  EXPECT_NE(check.exit_code, 0);
  EXPECT_EQ(check.out, "");
  EXPECT_EQ(check.err, "engine_check: MINFER_ISA=" + cause + "\n");
}

TEST(IsaOverride, UnknownValueIsRefused) {
  expect_refused("avx9", "avx9: unknown instruction set (expected scalar, avx2 or avx512)");
  expect_refused("AVX2", "AVX2: unknown instruction set (expected scalar, avx2 or avx512)");
}

// Only on a CPU that lacks a target (an AVX2-only one: avx512); the message itself is
// checked on every CPU by Isa.OverrideTheCpuCannotRunIsRefusedInOneLine.
TEST(IsaOverride, TargetTheCpuCannotRunIsRefused) {
  std::string runnable;
  for (Isa isa : runnable_isas()) runnable = isa_name(isa) + (runnable.empty() ? "" : ", " + runnable);
  int refused = 0;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512})
    if (!isa_runnable(isa)) {
      const std::string name = isa_name(isa);
      expect_refused(name, name + ": this CPU cannot run it (runnable: " + runnable + ")");
      ++refused;
    }
  if (refused == 0) GTEST_SKIP() << "this CPU runs every target";
}

}  // namespace
}  // namespace minfer::test
