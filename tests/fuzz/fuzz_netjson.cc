// libFuzzer harness: a net.json document through the loader (weights and labels files
// resolve in models/), compile and, when small, a run.
#include <string_view>

#include "graph/netjson_loader.h"
#include "tests/fuzz/fuzz_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace minfer;
  fuzz::refusals_are_fine([&] {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    fuzz::compile_and_run(parse_netjson(text, "fuzz.json", MINFER_SOURCE_DIR "/models", fuzz::kMaxMemory));
  });
  return 0;
}
