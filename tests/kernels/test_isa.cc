// The one dispatch point (profiler/isa.h): MINFER_ISA's checking and its messages, and
// that every kernel family and the machine probe run the active target.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "graph/errors.h"
#include "ops/kernels/depthwise_conv.h"
#include "ops/kernels/direct_conv.h"
#include "ops/kernels/gemm.h"
#include "ops/kernels/vector_activations.h"
#include "profiler/machine_probe.h"
#include "tests/kernels/conv_kernel_test_util.h"

namespace minfer::test {
namespace {

std::string refusal(const std::string& value, const std::vector<Isa>& runnable) {
  try {
    parse_isa_override(value, runnable);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Isa, OverrideNamesARunnableTarget) {
  const std::vector<Isa> all = {Isa::kAvx512, Isa::kAvx2, Isa::kScalar};
  EXPECT_EQ(parse_isa_override("scalar", all), Isa::kScalar);
  EXPECT_EQ(parse_isa_override("avx2", all), Isa::kAvx2);
  EXPECT_EQ(parse_isa_override("avx512", all), Isa::kAvx512);
  EXPECT_EQ(parse_isa_override("scalar", {Isa::kScalar}), Isa::kScalar);
}

TEST(Isa, OverrideTheCpuCannotRunIsRefusedInOneLine) {
  EXPECT_EQ(refusal("avx512", {Isa::kAvx2, Isa::kScalar}),
            "MINFER_ISA=avx512: this CPU cannot run it (runnable: scalar, avx2)");
  EXPECT_EQ(refusal("avx2", {Isa::kScalar}), "MINFER_ISA=avx2: this CPU cannot run it (runnable: scalar)");
}

TEST(Isa, UnknownOverrideIsRefusedInOneLine) {
  const std::vector<Isa> all = {Isa::kAvx512, Isa::kAvx2, Isa::kScalar};
  const std::string expected = ": unknown instruction set (expected scalar, avx2 or avx512)";
  EXPECT_EQ(refusal("AVX2", all), "MINFER_ISA=AVX2" + expected);
  EXPECT_EQ(refusal("avx512f", all), "MINFER_ISA=avx512f" + expected);
  EXPECT_EQ(refusal(" avx2", all), "MINFER_ISA= avx2" + expected);
  // Control characters are escaped and a long value is cut, so the message stays one short line.
  EXPECT_EQ(refusal("avx2\nscalar", all), "MINFER_ISA=avx2\\x0ascalar" + expected);
  EXPECT_EQ(refusal(std::string(100, 'a'), all), "MINFER_ISA=" + std::string(32, 'a') + "..." + expected);
}

// ctest runs this once per target with MINFER_ISA set, and in the plain run without it.
TEST(Isa, ActiveIsTheForcedTargetElseTheBestRunnable) {
  const char* forced = std::getenv("MINFER_ISA");
  if (forced != nullptr && *forced != '\0')
    EXPECT_STREQ(isa_name(active_isa()), forced);
  else
    EXPECT_EQ(active_isa(), runnable_isas().front());
  EXPECT_EQ(runnable_isas().back(), Isa::kScalar);
}

TEST(Isa, EveryKernelFamilyRunsTheActiveTarget) {
  const Isa isa = active_isa();
  EXPECT_EQ(kernels::active_gemm_kernel().isa, isa);
  EXPECT_EQ(kernels::active_vector_activations().isa, isa);
  const kernels::DepthwiseKernel* depthwise =
      kernels::find_depthwise_kernel(conv_shape(8, 9, 9, 8, 8, 3, 1, 1, 1, 1, 1));
  ASSERT_NE(depthwise, nullptr);
  EXPECT_EQ(depthwise->isa, isa);
  const kernels::DirectConvKernel* direct =
      kernels::find_direct_conv_kernel(conv_shape(3, 16, 16, 32, 1, 3, 2, 1, 1, 1, 1));
  ASSERT_NE(direct, nullptr);
  EXPECT_EQ(direct->isa, isa);
  // The roof is what the kernels in use can reach: the probe runs their instruction set
  // (SSE2, the baseline the scalar kernels are compiled for, under them).
  const std::string probe = probe_isa().name;
  EXPECT_EQ(probe, isa == Isa::kAvx512 ? "avx512f" : isa == Isa::kAvx2 ? "fma3+avx2" : "sse2");
  EXPECT_EQ(probe_isa().vector_bits, isa == Isa::kAvx512 ? 512 : isa == Isa::kAvx2 ? 256 : 128);
}

}  // namespace
}  // namespace minfer::test
