// Analytic cost of one op (or a sum of ops). MACs are multiply-accumulates; FLOPs are
// 2 x MACs for dot-product ops plus each op's element-wise FLOPs, never mixed units.
#pragma once

#include <cstdint>
#include <stdexcept>

namespace minfer {

struct Cost {
  int64_t macs = 0;
  int64_t flops = 0;
  int64_t params = 0;         // elements of the initializers the op reads
  int64_t bytes_read = 0;     // inputs and weights
  int64_t bytes_written = 0;  // outputs

  // Throws std::overflow_error rather than wrap around (hostile shapes).
  Cost& operator+=(const Cost& o) {
    if (__builtin_add_overflow(macs, o.macs, &macs) || __builtin_add_overflow(flops, o.flops, &flops) ||
        __builtin_add_overflow(params, o.params, &params) ||
        __builtin_add_overflow(bytes_read, o.bytes_read, &bytes_read) ||
        __builtin_add_overflow(bytes_written, o.bytes_written, &bytes_written))
      throw std::overflow_error("the model's total cost overflows 64 bits");
    return *this;
  }
  int64_t bytes() const { return bytes_read + bytes_written; }
  friend bool operator==(const Cost&, const Cost&) = default;
};

}  // namespace minfer
