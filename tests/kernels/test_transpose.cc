// kernels::transpose against the definition, over sizes around its 4x4 blocks and leading
// dimensions wider than the tile; nothing outside the tile is written.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/kernels/transpose.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

TEST(Transpose, MatchesTheDefinitionAndWritesOnlyTheTile) {
  for (int64_t rows : {1, 3, 4, 5, 8, 13, 49})
    for (int64_t cols : {1, 2, 4, 7, 16, 33}) {
      const int64_t src_ld = cols + 3, dst_ld = rows + 5;
      const std::vector<float> src = random_values(rows * src_ld, static_cast<uint32_t>(rows * 100 + cols));
      std::vector<float> dst(cols * dst_ld, NAN);
      kernels::transpose(src.data(), src_ld, rows, cols, dst.data(), dst_ld);
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < dst_ld; ++i) {
          const float got = dst[j * dst_ld + i];
          if (i < rows)
            ASSERT_EQ(got, src[i * src_ld + j]) << rows << "x" << cols << " at " << i << "," << j;
          else
            ASSERT_TRUE(std::isnan(got)) << rows << "x" << cols << ": wrote past the tile at " << i << "," << j;
        }
    }
}

}  // namespace
}  // namespace minfer::test
