// 64-byte-aligned storage (graph/aligned_buffer.h): the packed weights kernels load as
// whole vectors start on a cache line whatever the size, where glibc's malloc gives 16
// bytes (a 512 KiB std::vector<float>, served by mmap, starts 16 bytes past a page).
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "graph/aligned_buffer.h"

namespace minfer {
namespace {

bool on_a_line(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 64 == 0;
}

TEST(AlignedVector, EveryBlockStartsOnACacheLine) {
  for (size_t n : {1, 3, 16, 1000, 33'000, 131'072, 1'000'003}) {
    AlignedVector<float> v(n, 1.0f);
    EXPECT_TRUE(on_a_line(v.data())) << n << " floats";
    v.assign(n + 5, 2.0f);  // a new block
    EXPECT_TRUE(on_a_line(v.data())) << n + 5 << " floats";
    EXPECT_EQ(v.back(), 2.0f);
    const AlignedVector<float> moved = std::move(v);
    EXPECT_TRUE(on_a_line(moved.data()));
  }
}

TEST(AlignedBuffer, IsZeroedAndStartsOnACacheLine) {
  const AlignedBuffer b(1000);
  EXPECT_TRUE(on_a_line(b.data()));
  EXPECT_EQ(b.bytes(), 1000);
  for (int64_t i = 0; i < b.bytes(); ++i) ASSERT_EQ(b.data()[i], std::byte{0});
}

}  // namespace
}  // namespace minfer
