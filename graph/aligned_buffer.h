// A zero-initialised, 64-byte-aligned float buffer (cache-line and AVX-512 aligned).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace minfer {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(int64_t bytes) {
    const size_t size = static_cast<size_t>((std::max<int64_t>(bytes, 1) + 63) / 64 * 64);
    data_.reset(static_cast<std::byte*>(std::aligned_alloc(64, size)));
    if (!data_) throw std::bad_alloc();
    std::fill(data_.get(), data_.get() + size, std::byte{0});
    bytes_ = bytes;
  }
  std::byte* data() const { return data_.get(); }
  int64_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte[], Free> data_;
  int64_t bytes_ = 0;
};

}  // namespace minfer
