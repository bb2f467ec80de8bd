// Static tensor shapes: the dimension list every op and report works with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace minfer {

using Shape = std::vector<int64_t>;

// Number of elements; throws std::overflow_error when the product does not fit in
// int64 (a hostile shape must never wrap around into a small allocation).
int64_t num_elements(const Shape& shape);

// "1x3x224x224"; "scalar" for rank 0.
std::string shape_str(const Shape& shape);

}  // namespace minfer
