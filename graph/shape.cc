#include "graph/shape.h"

#include <stdexcept>

#include <fmt/format.h>

namespace minfer {

int64_t num_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw std::overflow_error(fmt::format("negative dimension {} in shape {}", d, shape_str(shape)));
    if (__builtin_mul_overflow(n, d, &n))
      throw std::overflow_error(fmt::format("shape {} has more elements than fit in 64 bits", shape_str(shape)));
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  if (shape.empty()) return "scalar";
  return fmt::format("{}", fmt::join(shape, "x"));
}

}  // namespace minfer
