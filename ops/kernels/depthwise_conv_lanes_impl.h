// The channels-in-lanes depthwise kernel, written once over a SIMD vector type and
// instantiated by depthwise_conv_avx2.cc and depthwise_conv_avx512.cc. Only those files
// include this header; everything here has internal linkage.
//
// One work item is a band of output rows of V::size channels of one image. Its input
// rows are transposed (lane_transpose.h) into a zero-bordered tile [rows][pitch][V::size]
// whose every pixel is one vector of the group's channels, so each output pixel is K*K
// vector multiply-adds with a weight vector per tap, whatever the plane's width or the
// stride: no lane idles on a 7-wide row and a stride needs no deinterleave. V::size
// output pixels at a time are summed in registers, transposed back into V::size channel
// rows, activated and stored into the NCHW planes. An NCHWc input (whole blocks of
// V::size channels) is the tile's layout already: its rows are copied, not transposed; an
// NCHWc output takes the sums as they are. Each output's sum runs over the taps
// in the per-plane kernel's order (bias, then row by row), so both kernels give the
// same bits.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ops/kernels/depthwise_conv.h"
#include "ops/kernels/lane_transpose.h"
#include "ops/kernels/simd.h"

namespace minfer::kernels {
namespace {

// Copies pixels [0, count) of channels [0, nc) of the planes at x (plane floats apart),
// row-major with rows w wide, into tile (pixel (r, c) at (r * pitch + c) * V::size).
template <class V>
void pack_pixels(const float* x, int64_t plane, int64_t nc, int64_t count, int64_t w, int64_t pitch, float* tile) {
  constexpr int64_t L = V::size;
  int64_t col = 0;
  float* dst = tile;
  // The next pixel's place: the tile's rows are pitch - w pixels longer than the input's.
  const auto advance = [&] {
    dst += L;
    if (++col == w) col = 0, dst += (pitch - w) * L;
  };
  int64_t p = 0;
  for (; p + L <= count; p += L) {
    V r[L];
#pragma GCC unroll 16
    for (int64_t c = 0; c < L; ++c) r[c] = c < nc ? V::load_unaligned(x + c * plane + p) : V(0.0f);
    transpose_square(r);
#pragma GCC unroll 16
    for (int64_t j = 0; j < L; ++j) {
      r[j].store_unaligned(dst);
      advance();
    }
  }
  if (p < count) {
    const int64_t n = count - p;
    V r[L];
    for (int64_t c = 0; c < L; ++c) r[c] = c < nc ? load_first_n(x + c * plane + p, n, V()) : V(0.0f);
    transpose_square(r);
    for (int64_t j = 0; j < n; ++j) {
      r[j].store_unaligned(dst);
      advance();
    }
  }
}

// Rows [0, rows) of w NCHWc pixels of one block at x (already V::size channels per
// pixel) into the tile, rows pitch pixels apart: a plain copy.
template <class V>
void copy_blocked_rows(const float* x, int64_t rows, int64_t w, int64_t pitch, float* tile) {
  constexpr int64_t L = V::size;
  for (int64_t r = 0; r < rows; ++r) std::copy(x + r * w * L, x + (r + 1) * w * L, tile + r * pitch * L);
}

// weights [channels, K * K] of channels [0, nc) to [K * K][V::size], lanes from nc on 0.
template <class V, int K>
void pack_weights(const float* weights, int64_t nc, float* packed) {
  constexpr int64_t L = V::size, taps = K * K;
  for (int64_t t = 0; t < taps; t += L) {
    const int64_t n = std::min(L, taps - t);
    V r[L];
    for (int64_t c = 0; c < L; ++c) r[c] = c < nc ? load_first_n(weights + c * taps + t, n, V()) : V(0.0f);
    transpose_square(r);
    for (int64_t j = 0; j < n; ++j) r[j].store_unaligned(packed + (t + j) * L);
  }
}

// Output pixels [p, p + V::size) of the band (flat, row-major; those from `count` on
// are computed at pixel 0's place and dropped): each from its taps in the tile, where
// offsets[q] is pixel q's top-left tap; activated and stored, as they are into the NCHWc
// block at y (BlockedOut), else transposed into the first nc planes at y.
// Taps are `dilation` pixels apart (1 when Dilated is false: a constant).
template <class V, int K, bool Dilated, bool BlockedOut, class Act>
[[gnu::always_inline]] inline void lanes_chunk(const float* tile, const int64_t* offsets, int64_t p, int64_t count,
                                               int64_t row_floats, int64_t dilation, const float* weights, V bias,
                                               Act activate, int64_t nc, float* y, int64_t plane) {
  constexpr int64_t L = V::size;
  const int64_t d = Dilated ? dilation : 1;
  // Window row by window row: its K weight vectors stay in registers across the L
  // pixels (L sums and K weights fit the register file), one load per multiply-add
  // where reloading each tap's weight took two; each sum still adds its taps row by row.
  V acc[L];
#pragma GCC unroll 16
  for (int64_t j = 0; j < L; ++j) acc[j] = bias;
#pragma GCC unroll 1
  for (int ki = 0; ki < K; ++ki) {
    V w[K];
#pragma GCC unroll 7
    for (int kj = 0; kj < K; ++kj) w[kj] = V::load_unaligned(weights + (ki * K + kj) * L);
#pragma GCC unroll 16
    for (int64_t j = 0; j < L; ++j) {
      const float* in = tile + offsets[p + j] + ki * d * row_floats;
#pragma GCC unroll 7
      for (int kj = 0; kj < K; ++kj) acc[j] = multiply_add(V::load_unaligned(in + kj * d * L), w[kj], acc[j]);
    }
  }
  const int64_t n = std::min(L, count - p);
  if constexpr (BlockedOut) {
    activate_all<L>(activate, acc);
    if (n == L) {
#pragma GCC unroll 16
      for (int64_t j = 0; j < L; ++j) acc[j].store_unaligned(y + (p + j) * L);
    } else {
      for (int64_t j = 0; j < n; ++j) acc[j].store_unaligned(y + (p + j) * L);
    }
    return;
  }
  // Activated after the transpose, out of the way of the sums' registers.
  transpose_square(acc);
  activate_all<L>(activate, acc);
  if (n == L && nc == L) {
#pragma GCC unroll 16
    for (int64_t c = 0; c < L; ++c) acc[c].store_unaligned(y + c * plane + p);
  } else {
    for (int64_t c = 0; c < nc; ++c) store_first_n(acc[c], y + c * plane + p, n);
  }
}

template <class V, int K, int S, bool Dilated>
void depthwise_lanes_of(const DepthwiseJob& job, int64_t begin, int64_t end, float* scratch) {
  constexpr int64_t L = V::size;
  const ConvGeometry& s = *job.shape;
  const int64_t dilation = s.win.dh, extent = (K - 1) * dilation + 1;
  const LaneLayout lay = lane_layout(s, L);
  const int64_t pad_top = s.win.pad_top, pad_left = s.win.pad_left;
  const int64_t in_plane = s.h * s.w, out_plane = s.out_h * s.out_w;
  const int64_t row_floats = lay.pitch * L;
  const int64_t band_pixels = lay.band_rows * s.out_w, slots = (band_pixels + L - 1) / L * L;
  float* weights = scratch;
  auto* offsets = reinterpret_cast<int64_t*>(weights + K * K * L);
  float* tile = weights + K * K * L + 2 * slots;
  for (int64_t q = 0; q < slots; ++q)
    offsets[q] = q < band_pixels ? (q / s.out_w * S * lay.pitch + q % s.out_w * S) * L : 0;
  // The tile's border columns are never written by pack_pixels: zero them (and all) once.
  std::fill(tile, tile + lay.tile_floats(L), 0.0f);
  const Activation act = *job.activation;  // a local copy: stores to y cannot alias it
  const bool in_registers = activation_in_registers(act);
  with_activation<V>(act, [&](auto activate) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t band = i % lay.bands, g = i / lay.bands % lay.groups, n = i / lay.bands / lay.groups;
      const int64_t c0 = g * L, nc = std::min(L, s.cin - c0);
      const int64_t oy0 = band * lay.band_rows, oy1 = std::min(s.out_h, oy0 + lay.band_rows);
      const int64_t rows = (oy1 - oy0 - 1) * S + extent, top = oy0 * S - pad_top;  // image row of tile row 0
      const int64_t r0 = std::clamp<int64_t>(top, 0, s.h), r1 = std::clamp<int64_t>(top + rows, r0, s.h);
      // Tile rows above and below the image: zeros (an earlier band may have filled them).
      for (int64_t t = 0; t < rows; ++t)
        if (top + t < r0 || top + t >= r1) std::fill(tile + t * row_floats, tile + (t + 1) * row_floats, 0.0f);
      // The group's first plane; in NCHWc (channels in whole blocks) plane0 * plane floats
      // is also the start of the group's block, whose pixels are L floats each.
      const int64_t plane0 = (n * s.cin + c0);
      float* const tile_top = tile + ((r0 - top) * lay.pitch + pad_left) * L;
      if (job.layouts.input_blocked)
        copy_blocked_rows<V>(job.x + plane0 * in_plane + r0 * s.w * L, r1 - r0, s.w, lay.pitch, tile_top);
      else
        pack_pixels<V>(job.x + plane0 * in_plane + r0 * s.w, in_plane, nc, (r1 - r0) * s.w, s.w, lay.pitch, tile_top);
      pack_weights<V, K>(job.weights + c0 * K * K, nc, weights);
      float lane_bias[L];
      for (int64_t c = 0; c < L; ++c) lane_bias[c] = job.bias && c < nc ? job.bias[c0 + c] : 0.0f;
      const V bias = V::load_unaligned(lane_bias);
      const int64_t count = (oy1 - oy0) * s.out_w;
      if (job.layouts.output_blocked) {
        float* y = job.y + plane0 * out_plane + oy0 * s.out_w * L;
        for (int64_t p = 0; p < count; p += L)
          lanes_chunk<V, K, Dilated, true>(tile, offsets, p, count, row_floats, dilation, weights, bias, activate, nc,
                                           y, out_plane);
        if (!in_registers) act.apply(y, count * L);
      } else {
        float* y = job.y + plane0 * out_plane + oy0 * s.out_w;
        for (int64_t p = 0; p < count; p += L)
          lanes_chunk<V, K, Dilated, false>(tile, offsets, p, count, row_floats, dilation, weights, bias, activate, nc,
                                            y, out_plane);
        if (!in_registers)
          for (int64_t c = 0; c < nc; ++c) act.apply(y + c * out_plane, count);
      }
    }
  });
}

// Dilated windows (DeepLab's) read taps `dilation` pixels apart from the same tile, in a
// copy of the kernel of its own, so that the undilated one keeps its constant offsets.
template <class V, int K, int S>
void depthwise_lanes(const DepthwiseJob& job, int64_t begin, int64_t end, float* scratch) {
  if (job.shape->win.dh == 1)
    depthwise_lanes_of<V, K, S, false>(job, begin, end, scratch);
  else
    depthwise_lanes_of<V, K, S, true>(job, begin, end, scratch);
}

// The channels-in-lanes kernels of one target, one per window of kDepthwiseWindows.
template <class V>
constexpr std::array<DepthwiseKernel, kDepthwiseWindows> depthwise_lanes_kernel_table(
    Isa isa, const std::array<const char*, kDepthwiseWindows>& names) {
  constexpr int lanes = static_cast<int>(V::size);
  return {{{names[0], isa, 3, 1, lanes, true, &depthwise_lanes<V, 3, 1>},
           {names[1], isa, 3, 2, lanes, true, &depthwise_lanes<V, 3, 2>},
           {names[2], isa, 5, 1, lanes, true, &depthwise_lanes<V, 5, 1>},
           {names[3], isa, 5, 2, lanes, true, &depthwise_lanes<V, 5, 2>},
           {names[4], isa, 7, 1, lanes, true, &depthwise_lanes<V, 7, 1>},
           {names[5], isa, 7, 2, lanes, true, &depthwise_lanes<V, 7, 2>}}};
}

// The per-plane kernels followed by the channels-in-lanes ones: a SIMD target's table.
constexpr std::array<DepthwiseKernel, 2 * kDepthwiseWindows> with_lanes_kernels(
    const std::array<DepthwiseKernel, kDepthwiseWindows>& planes,
    const std::array<DepthwiseKernel, kDepthwiseWindows>& lanes) {
  std::array<DepthwiseKernel, 2 * kDepthwiseWindows> all{};
  for (size_t i = 0; i < kDepthwiseWindows; ++i) all[i] = planes[i], all[kDepthwiseWindows + i] = lanes[i];
  return all;
}

}  // namespace
}  // namespace minfer::kernels
