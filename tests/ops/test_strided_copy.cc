// StridedCopy against the naive odometer written here: transposes, slices with steps
// (negative too), broadcasts, pads into a larger destination and crops, elements of 1, 4
// and 8 bytes; each case's every destination byte compared, the untouched ones too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "ops/strided_copy.h"

namespace minfer {
namespace {

// dst[sum i_d * dst_strides[d]] = src[sum i_d * src_strides[d]] for every index i.
void naive_copy(const std::byte* src, std::byte* dst, const Shape& dims, const Shape& ss, const Shape& ds,
                int64_t bytes, int64_t src_offset, int64_t dst_offset) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, s = src_offset, t = dst_offset;
    for (size_t d = dims.size(); d-- > 0;) {
      const int64_t at = rest % dims[d];
      rest /= dims[d];
      s += at * ss[d];
      t += at * ds[d];
    }
    std::memcpy(dst + t * bytes, src + s * bytes, static_cast<size_t>(bytes));
  }
}

struct Case {
  Shape dims, src_strides, dst_strides;
  int64_t src_offset = 0, dst_offset = 0;
};

// Elements of the largest offset either side reaches, plus one.
int64_t extent(const Shape& dims, const Shape& strides, int64_t offset) {
  int64_t hi = offset;
  for (size_t d = 0; d < dims.size(); ++d)
    if (strides[d] > 0) hi += (dims[d] - 1) * strides[d];
  return std::max<int64_t>(hi + 1, 1);
}

void expect_same_as_naive(const Case& c, int64_t bytes, const std::string& what) {
  const int64_t src_n = extent(c.dims, c.src_strides, c.src_offset);
  const int64_t dst_n = extent(c.dims, c.dst_strides, c.dst_offset);
  std::vector<std::byte> src(static_cast<size_t>(src_n * bytes));
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i * 7 + 3);
  std::vector<std::byte> want(static_cast<size_t>(dst_n * bytes), std::byte{0xAB});
  naive_copy(src.data(), want.data(), c.dims, c.src_strides, c.dst_strides, bytes, c.src_offset, c.dst_offset);
  const StridedCopy copy(c.dims, c.src_strides, c.dst_strides, bytes);
  for (int threads : {1, 2}) {
    std::vector<std::byte> got(want.size(), std::byte{0xAB});
    copy.run(src.data(), got.data(), c.src_offset, c.dst_offset, threads);
    EXPECT_TRUE(got == want) << what << " bytes " << bytes << " threads " << threads;
  }
}

Shape permuted(const Shape& v, const std::vector<size_t>& perm) {
  Shape out;
  for (size_t p : perm) out.push_back(v[p]);
  return out;
}

TEST(StridedCopy, EveryPermutationOfShapesWithUnitAndOddAxes) {
  for (const Shape& x : {Shape{2, 3, 4}, Shape{1, 58, 2, 5, 7}, Shape{3, 1, 17, 9}, Shape{5, 6, 8, 8}, Shape{1, 1, 1}})
    for (int64_t bytes : {1, 4, 8}) {
      std::vector<size_t> perm(x.size());
      std::iota(perm.begin(), perm.end(), 0);
      do {
        const Shape dims = permuted(x, perm), src = permuted(dense_strides(x), perm);
        expect_same_as_naive({dims, src, dense_strides(dims)}, bytes, "transpose of " + shape_str(x));
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
}

TEST(StridedCopy, SlicesWithStepsBackwardsAndCrops) {
  // x [4, 10, 12]: the window x[1:4, 9:0:-2, 2:11:3] and x[:, 3:7, :] (rows of whole planes).
  const Shape xs = dense_strides({4, 10, 12});
  expect_same_as_naive({{3, 5, 3}, {xs[0], -2 * xs[1], 3}, dense_strides({3, 5, 3}), 1 * xs[0] + 9 * xs[1] + 2}, 4,
                       "stepped slice");
  expect_same_as_naive({{4, 4, 12}, xs, dense_strides({4, 4, 12}), 3 * xs[1]}, 4, "channel slice");
  expect_same_as_naive({{4, 10, 5}, {xs[0], xs[1], -1}, dense_strides({4, 10, 5}), 11}, 8, "reversed rows");
}

TEST(StridedCopy, BroadcastsRepeatElementsAndRows) {
  // [3, 1] -> [2, 3, 5] (each element repeated along the row) and [1, 5] -> [4, 5].
  expect_same_as_naive({{2, 3, 5}, {0, 1, 0}, dense_strides({2, 3, 5})}, 4, "column broadcast");
  expect_same_as_naive({{4, 5}, {0, 1}, dense_strides({4, 5})}, 4, "row broadcast");
  expect_same_as_naive({{6}, {0}, {1}}, 1, "scalar broadcast");
}

TEST(StridedCopy, PadsIntoALargerDestination) {
  // x [2, 3, 4] into y [2, 5, 8] at [0, 1, 2]; and an odd strided destination.
  const Shape ys = dense_strides({2, 5, 8});
  expect_same_as_naive({{2, 3, 4}, dense_strides({2, 3, 4}), ys, 0, ys[1] + 2}, 4, "pad");
  expect_same_as_naive({{3, 7}, {7, 1}, {1, 5}, 0, 2}, 4, "transpose into a padded destination");
}

TEST(StridedCopy, RandomStridedViews) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t rank = 1 + rng() % 5;
    Case c;
    for (size_t d = 0; d < rank; ++d) c.dims.push_back(1 + static_cast<int64_t>(rng() % 6));
    // Source: a random permutation of a dense layout, some axes repeated (0) or stepped.
    std::vector<size_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    Shape src = dense_strides(permuted(c.dims, perm)), stepped(rank);
    for (size_t d = 0; d < rank; ++d) stepped[perm[d]] = src[d];
    for (size_t d = 0; d < rank; ++d) {
      const unsigned r = rng() % 6;
      if (r == 0) stepped[d] = 0;
      if (r == 1) stepped[d] *= 2;
    }
    c.src_strides = stepped;
    c.dst_strides = dense_strides(c.dims);
    if (rng() % 3 == 0)  // into a destination with gaps
      for (auto& s : c.dst_strides) s *= 2;
    expect_same_as_naive(c, rng() % 2 ? 4 : 8, "trial " + std::to_string(trial));
  }
}

// Copies large enough for two threads, split along the outermost loop or, where there is
// none, along the inner run (a 2-D transpose's rows, one long row).
TEST(StridedCopy, TwoThreadsSplitLargeCopies) {
  expect_same_as_naive({{96, 3136}, {1, 96}, {3136, 1}}, 4, "NHWC -> NCHW plane");
  expect_same_as_naive({{3136, 96}, {1, 3136}, {96, 1}}, 4, "NCHW -> NHWC plane");
  expect_same_as_naive({{2, 58, 2, 28, 28}, {2 * 58 * 784, 784, 58 * 784, 28, 1}, dense_strides({2, 58, 2, 28, 28})}, 4,
                       "channel shuffle");
  expect_same_as_naive({{1 << 17}, {1}, {1}}, 4, "one row");
  expect_same_as_naive({{3, 1 << 16}, {0, 1}, {1 << 16, 1}}, 8, "broadcast rows");
}

TEST(StridedCopy, EmptyAxisCopiesNothing) {
  expect_same_as_naive({{3, 0, 4}, {0, 4, 1}, {0, 4, 1}}, 4, "empty");
}

}  // namespace
}  // namespace minfer
