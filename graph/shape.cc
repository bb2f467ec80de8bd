#include "graph/shape.h"

#include <fmt/format.h>

#include <stdexcept>

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

int64_t checked_mul(std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p))
      throw std::overflow_error(fmt::format("the product of {} overflows 64 bits", fmt::join(factors, " x ")));
  return p;
}

int64_t checked_add(std::initializer_list<int64_t> terms) {
  int64_t s = 0;
  for (int64_t t : terms)
    if (__builtin_add_overflow(s, t, &s))
      throw std::overflow_error(fmt::format("the sum of {} overflows 64 bits", fmt::join(terms, " + ")));
  return s;
}

std::string shape_str(const Shape& shape) {
  if (shape.empty()) return "scalar";
  return fmt::format("{}", fmt::join(shape, "x"));
}

}  // namespace minfer
