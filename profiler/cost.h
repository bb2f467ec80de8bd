// Analytic cost of one op (or a sum of ops). MACs are multiply-accumulates; FLOPs are
// 2 x MACs for dot-product ops plus each op's element-wise FLOPs, never mixed units.
#pragma once

#include <cstdint>

namespace minfer {

struct Cost {
  int64_t macs = 0;
  int64_t flops = 0;
  int64_t params = 0;         // elements of the initializers the op reads
  int64_t bytes_read = 0;     // inputs and weights
  int64_t bytes_written = 0;  // outputs

  Cost& operator+=(const Cost& o) {
    macs += o.macs;
    flops += o.flops;
    params += o.params;
    bytes_read += o.bytes_read;
    bytes_written += o.bytes_written;
    return *this;
  }
  int64_t bytes() const { return bytes_read + bytes_written; }
  friend bool operator==(const Cost&, const Cost&) = default;
};

}  // namespace minfer
