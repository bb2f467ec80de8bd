#include "tests/isa_test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include "graph/errors.h"

namespace minfer::test {
namespace {

bool forced() {
  const char* value = std::getenv("MINFER_ISA");
  return value != nullptr && *value != '\0';
}

// Skips the whole run when MINFER_ISA names a target this CPU lacks, with the kernels'
// own message: a run that tested nothing must not look like a pass. Any other value that
// the kernels refuse fails every test that chooses a kernel.
class IsaEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!forced()) return;
    const std::string_view value = std::getenv("MINFER_ISA");
    try {
      active_isa();
    } catch (const UsageError& e) {
      for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512})
        if (value == isa_name(isa)) GTEST_SKIP() << e.what();
    }
  }
};

[[maybe_unused]] ::testing::Environment* const kIsaEnvironment =
    ::testing::AddGlobalTestEnvironment(new IsaEnvironment);

}  // namespace

std::vector<Isa> isas_under_test() {
  if (forced()) return {active_isa()};
  return runnable_isas();
}

}  // namespace minfer::test
