// Static tensor shapes: the dimension list every op and report works with.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace minfer {

using Shape = std::vector<int64_t>;

// Number of elements; throws std::overflow_error when the product does not fit in
// int64 (a hostile shape must never wrap around into a small allocation).
int64_t num_elements(const Shape& shape);

// a * b * ... and a + b + ...; throw std::overflow_error when the result does not fit
// in int64: sizes and costs computed from hostile shapes and attributes must never
// wrap around.
int64_t checked_mul(std::initializer_list<int64_t> factors);
int64_t checked_add(std::initializer_list<int64_t> terms);

// "1x3x224x224"; "scalar" for rank 0.
std::string shape_str(const Shape& shape);

}  // namespace minfer
