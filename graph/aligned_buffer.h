// A zero-initialised, 64-byte-aligned float buffer (cache-line and AVX-512 aligned), and
// std::vector storage with the same alignment.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

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

// Blocks of 64-byte alignment for a std::vector that kernels read in whole vectors: from
// glibc's malloc (16-byte alignment) a 64-byte load spans two cache lines three times in
// four (ResNet-50's 512 -> 512 stride-2 layer, whose weights were 32 bytes off a line,
// took 0.92x the time aligned: interleaved engine_bench rounds, Zen 5).
template <class T>
struct AlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p, kAlignment); }
  template <class U>
  bool operator==(const AlignedAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace minfer
