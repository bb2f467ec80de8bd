// libFuzzer harness: an encoded image through the decoder, the resize and the
// normalisation. The target shape varies with the input's length, so mutations reach
// grayscale and RGB, shrinking and enlarging.
#include <span>

#include "engine/image_input.h"
#include "tests/fuzz/fuzz_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace minfer;
  const int64_t channels = size % 2 ? 3 : 1;
  const Shape shape{1 + static_cast<int64_t>(size % 3), channels, 1 + static_cast<int64_t>(size % 37),
                    1 + static_cast<int64_t>(size % 29)};
  Preprocess preprocess;
  preprocess.mean = {0.5f};
  preprocess.std = {0.25f};
  fuzz::refusals_are_fine([&] {
    image_to_tensor(std::span<const unsigned char>(data, size), "fuzz.png", shape, preprocess, fuzz::kMaxMemory);
  });
  return 0;
}
