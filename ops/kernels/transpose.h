// Out-of-place transposes of float tiles, for kernels that change a tile's layout on the
// way in or out: the GEMM's transposed C, the blocked convolution's NCHW <-> NCHWc.
#pragma once

#include <cstdint>

namespace minfer::kernels {

// dst[j * dst_ld + i] = src[i * src_ld + j] for i < rows, j < cols: 4x4 blocks through
// SSE registers (a quarter of the scalar loop's loads and stores), the edges one by one.
// With an addend laid out as dst, src[i * src_ld + j] + addend[j * dst_ld + i], each
// addend element read before the dst element at its place is written: it may be dst.
void transpose(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float* dst, int64_t dst_ld,
               const float* addend = nullptr);

}  // namespace minfer::kernels
