// Winograd F(2x2, 3x3)'s input and output transforms over NCHWc blocks (the blocked
// convolution's Winograd form, blocked_conv.h), written once over a vector type and
// instantiated per target by blocked_conv_<isa>.cc. Each vector holds the c channels of
// one block at one place, so every transform is c independent 4x4 transforms at once,
// in adds and subtracts only (Lavin and Gray's matrices: B and A hold 0 and +-1, so
// these are exact up to the adds' rounding; G's halves are applied to the weights once).
// Only those files include this header; everything here has internal linkage.
#pragma once

#include <cmath>
#include <cstdint>

#include "ops/kernels/blocked_conv.h"
#include "ops/kernels/simd.h"

namespace minfer::kernels {
namespace {

// Copies n floats from src to dst (null: checks only) and returns whether any is a NaN
// or an infinity (all exponent bits set), in one pass of vectors: the input copy flags
// the rows whose windows Winograd must not transform (a compare on the copy after it, in
// the generic build's SSE2 vectors, took more time than the copy itself).
template <class V>
bool copy_checking(const float* src, float* dst, int64_t n) {
  using I = xsimd::batch<int32_t, typename V::arch_type>;
  constexpr int64_t W = V::size;
  const I exponent(0x7f800000);
  xsimd::batch_bool<int32_t, typename V::arch_type> any(false);
  const auto see = [&](V v) { any = any || (xsimd::bitwise_cast<I>(v) & exponent) == exponent; };
  int64_t i = 0;
  if (dst) {
    for (; i + W <= n; i += W) {
      const V v = V::load_unaligned(src + i);
      v.store_unaligned(dst + i);
      see(v);
    }
  } else {
    for (; i + W <= n; i += W) see(V::load_unaligned(src + i));
  }
  bool tail = false;
  for (; i < n; ++i) {
    if (dst) dst[i] = src[i];
    tail |= !std::isfinite(src[i]);
  }
  return tail || xsimd::any(any);
}

// V = B^T d B for each 4x4 window d (two pixels apart) of each input block.
template <class V>
void winograd_input_tiles(const WinogradInput& in) {
  constexpr int64_t C = V::size;
  const int64_t xi_stride = in.blocks * in.tiles * C;
  for (int64_t b = 0; b < in.blocks; ++b)
    for (int64_t tile = 0; tile < in.tiles; ++tile) {
      const int64_t ty = (in.first + tile) / in.tiles_w, tx = (in.first + tile) % in.tiles_w;
      const float* x = in.x + b * in.x_block + 2 * ty * in.x_row + 2 * tx * C;
      V t[4][4];  // B^T d: the window's rows combined, column by column
      for (int j = 0; j < 4; ++j) {
        const V d0 = V::load_unaligned(x + j * C), d1 = V::load_unaligned(x + in.x_row + j * C);
        const V d2 = V::load_unaligned(x + 2 * in.x_row + j * C), d3 = V::load_unaligned(x + 3 * in.x_row + j * C);
        t[0][j] = d0 - d2;
        t[1][j] = d1 + d2;
        t[2][j] = d2 - d1;
        t[3][j] = d1 - d3;
      }
      float* v = in.v + (b * in.tiles + tile) * C;
      for (int i = 0; i < 4; ++i) {  // (B^T d) B: each row's columns combined
        (t[i][0] - t[i][2]).store_unaligned(v + (4 * i + 0) * xi_stride);
        (t[i][1] + t[i][2]).store_unaligned(v + (4 * i + 1) * xi_stride);
        (t[i][2] - t[i][1]).store_unaligned(v + (4 * i + 2) * xi_stride);
        (t[i][1] - t[i][3]).store_unaligned(v + (4 * i + 3) * xi_stride);
      }
    }
}

// Y = A^T M A for each tile's 16 products, plus the bias (and the residual), activated,
// stored where the 2x2 output pixels fall inside the band.
template <class V, class Activate>
void winograd_output_tiles_with(const WinogradOutput& o, Activate activate) {
  constexpr int64_t C = V::size;
  const int64_t xi_stride = o.m_plane;
  for (int64_t b = 0; b < o.blocks; ++b) {
    const V bias = o.bias ? V::load_unaligned(o.bias + b * C) : V(0.0f);
    for (int64_t tile = 0; tile < o.tiles; ++tile) {
      if (o.skip && o.skip[tile]) continue;
      const int64_t ty = (o.first + tile) / o.tiles_w, tx = (o.first + tile) % o.tiles_w;
      const float* m = o.m + (b * o.tiles + tile) * C;
      V s[2][4];  // A^T M: the products' rows combined, column by column
      for (int j = 0; j < 4; ++j) {
        const V m0 = V::load_unaligned(m + j * xi_stride), m1 = V::load_unaligned(m + (4 + j) * xi_stride);
        const V m2 = V::load_unaligned(m + (8 + j) * xi_stride), m3 = V::load_unaligned(m + (12 + j) * xi_stride);
        s[0][j] = m0 + m1 + m2;
        s[1][j] = m1 - m2 - m3;
      }
      for (int i = 0; i < 2; ++i) {
        const int64_t oy = 2 * ty + i;
        if (oy >= o.rows) break;
        const V y[2] = {s[i][0] + s[i][1] + s[i][2] + bias, s[i][1] - s[i][2] - s[i][3] + bias};
        for (int k = 0; k < 2; ++k) {
          const int64_t ox = 2 * tx + k;
          if (ox >= o.out_w) break;
          const int64_t at = b * o.out_block + oy * o.out_w * C + ox * C;
          const V sum = o.residual ? y[k] + V::load_unaligned(o.residual + at) : y[k];
          activate(sum).store_unaligned(o.out + at);
        }
      }
    }
  }
}

template <class V>
void winograd_output_tiles(const WinogradOutput& o) {
  const Activation none{};
  with_activation<V>(o.activation ? *o.activation : none,
                     [&](auto activate) { winograd_output_tiles_with<V>(o, activate); });
}

}  // namespace
}  // namespace minfer::kernels
