// libFuzzer harness: ONNX bytes through the importer (with its load-time folding),
// compile and, when small, a run.
#include <string>

#include "graph/onnx_loader.h"
#include "tests/fuzz/fuzz_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace minfer;
  fuzz::refusals_are_fine([&] {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    fuzz::compile_and_run(
        parse_onnx(bytes, "fuzz.onnx", MINFER_SOURCE_DIR "/tests/data/bad_models", {}, {}, fuzz::kMaxMemory));
  });
  return 0;
}
