// Workspace and ThreadScratch (ops/kernels/workspace.h): sizes round to whole cache
// lines, and taking more scratch than there is throws instead of overrunning.
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "ops/kernels/workspace.h"

namespace minfer {
namespace {

TEST(Workspace, SizesRoundUpToWholeCacheLines) {
  EXPECT_EQ(whole_lines(0), 0);
  EXPECT_EQ(whole_lines(1), 16);
  EXPECT_EQ(whole_lines(16), 16);
  EXPECT_EQ(whole_lines(17), 32);
  EXPECT_EQ(whole_line_bytes(0), 0);
  EXPECT_EQ(whole_line_bytes(1), 64);
  EXPECT_EQ(whole_line_bytes(64), 64);
  EXPECT_EQ(whole_line_bytes(65), 128);
  EXPECT_EQ(whole_line_bytes(4 * 17), 4 * whole_lines(17));
}

TEST(Workspace, ThreadScratchHandsEachThreadItsPieceAndThrowsPastIt) {
  std::vector<std::byte> memory(3 * 128);
  const ThreadScratch own(memory.data(), 3, 128);
  for (int t = 0; t < 3; ++t) {
    const std::span<float> piece = own.floats(t, 32, "test");
    EXPECT_EQ(reinterpret_cast<std::byte*>(piece.data()), memory.data() + 128 * t);
    EXPECT_EQ(piece.size(), 32u);
  }
  EXPECT_THROW(own.floats(0, 33, "test"), std::logic_error);
  EXPECT_THROW(own.floats(3, 1, "test"), std::logic_error);
  EXPECT_THROW(own.floats(-1, 1, "test"), std::logic_error);

  const Workspace workspace({memory.data(), 100}, own);
  EXPECT_NO_THROW(workspace.require(100, "test"));
  EXPECT_THROW(workspace.require(101, "test"), std::logic_error);
  EXPECT_EQ(workspace.threads().threads(), 3);
}

}  // namespace
}  // namespace minfer
