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
// NCHWc output takes the sums as they are. An NCHWc input, on most planes,
// needs no tile at all (depthwise_lanes_blocked). Each output's sum runs over the taps
// in the per-plane kernel's order (bias, then row by row), so both kernels give the
// same bits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

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

// acc[j] = bias + the K x K taps of pixel j (j < N) times the weights ([K * K][V::size]),
// pixel j's top-left tap at in(j), its rows row_floats apart and its taps d pixels apart.
// Window row by window row: its K weight vectors stay in registers across the N pixels
// (N sums and K weights fit the register file), one load per multiply-add where
// reloading each tap's weight took two; each sum still adds its taps row by row.
template <class V, int K, int N, class In>
[[gnu::always_inline]] inline void window_sums(V (&acc)[N], V bias, In in, int64_t row_floats, int64_t d,
                                               const float* weights) {
  constexpr int64_t L = V::size;
#pragma GCC unroll 16
  for (int j = 0; j < N; ++j) acc[j] = bias;
#pragma GCC unroll 1
  for (int ki = 0; ki < K; ++ki) {
    V w[K];
#pragma GCC unroll 7
    for (int kj = 0; kj < K; ++kj) w[kj] = V::load_unaligned(weights + (ki * K + kj) * L);
#pragma GCC unroll 16
    for (int j = 0; j < N; ++j) {
      const float* row = in(j) + ki * d * row_floats;
#pragma GCC unroll 7
      for (int kj = 0; kj < K; ++kj) acc[j] = multiply_add(V::load_unaligned(row + kj * d * L), w[kj], acc[j]);
    }
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
  V acc[L];
  window_sums<V, K, L>(
      acc, bias, [&](int j) { return tile + offsets[p + j]; }, row_floats, Dilated ? dilation : 1, weights);
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

// NCHWc in and out: the taps are read where they are, with no tile. Copying the band's
// input rows into a zero-bordered tile took more time than the sums on stride-2 layers
// (57% of MobileNetV1's 64-channel 112x112 stride-2 layer, whose input is four times its
// output; Zen 4), where ONNX Runtime reads the blocks in place. Pixels whose window lies
// in the image (all but a frame of the plane) are summed N at a time along their row from
// constant offsets; the frame's pixels read a zero vector for each tap outside the image,
// as the tile's border gave them, so each sum adds the same products in the same order
// (the same bits as the other layouts).
template <class V, int K, int S, bool Dilated>
struct BlockedPlane {
  static constexpr int64_t L = V::size;
  const float* x;  // the image's block of this group: h * w pixels of L floats
  int64_t h, w, pad_top, pad_left, d;
  const float* weights;  // [K * K][L]
  const float* zeros;    // L zero floats

  int64_t dilation() const { return Dilated ? d : 1; }

  // Output pixels [0, N) of a row from input pixel `in` (the first one's top-left tap),
  // every tap in the image; stored from y, L floats each.
  template <int N, class Act>
  [[gnu::always_inline]] void inside(const float* in, V bias, Act activate, float* y) const {
    V acc[N];
    window_sums<V, K, N>(
        acc, bias, [&](int j) { return in + j * S * L; }, w * L, dilation(), weights);
    activate_all<N>(activate, acc);
#pragma GCC unroll 16
    for (int j = 0; j < N; ++j) acc[j].store_unaligned(y + j * L);
  }

  // Output pixels [ox, ox + N) of row oy, any of whose taps may lie outside.
  template <int N, class Act>
  [[gnu::always_inline]] void checked(int64_t oy, int64_t ox, V bias, Act activate, float* y) const {
    const int64_t dd = dilation(), iy0 = oy * S - pad_top, ix0 = ox * S - pad_left;
    V acc[N];
#pragma GCC unroll 4
    for (int j = 0; j < N; ++j) acc[j] = bias;
    for (int ki = 0; ki < K; ++ki) {
      const int64_t iy = iy0 + ki * dd;
      const bool row_in = iy >= 0 && iy < h;
      for (int kj = 0; kj < K; ++kj) {
        const V wk = V::load_unaligned(weights + (ki * K + kj) * L);
#pragma GCC unroll 4
        for (int j = 0; j < N; ++j) {
          const int64_t ix = ix0 + j * S + kj * dd;
          const float* src = row_in && ix >= 0 && ix < w ? x + (iy * w + ix) * L : zeros;
          acc[j] = multiply_add(V::load_unaligned(src), wk, acc[j]);
        }
      }
    }
    activate_all<N>(activate, acc);
#pragma GCC unroll 4
    for (int j = 0; j < N; ++j) acc[j].store_unaligned(y + j * L);
  }

  // Output pixels [ox, end) of row oy through checked, 4 at a time.
  template <class Act>
  void checked_run(int64_t oy, int64_t ox, int64_t end, V bias, Act activate, float* y) const {
    for (; ox + 4 <= end; ox += 4) checked<4>(oy, ox, bias, activate, y + ox * L);
    switch (end - ox) {
      case 3: return checked<3>(oy, ox, bias, activate, y + ox * L);
      case 2: return checked<2>(oy, ox, bias, activate, y + ox * L);
      case 1: return checked<1>(oy, ox, bias, activate, y + ox * L);
      default: return;
    }
  }

  // Output row oy's pixels [0, out_w) into y; [lo, hi) have every tap in the image when
  // row_inside.
  template <class Act>
  void row(int64_t oy, int64_t out_w, int64_t lo, int64_t hi, bool row_inside, V bias, Act activate, float* y) const {
    if (!row_inside) lo = hi = out_w;
    checked_run(oy, 0, lo, bias, activate, y);
    if (lo < hi) {
      const float* in = x + ((oy * S - pad_top) * w + lo * S - pad_left) * L;
      int64_t ox = lo;
      for (; ox + L <= hi; ox += L) inside<L>(in + (ox - lo) * S * L, bias, activate, y + ox * L);
      // The rest, fewer than L, in runs of 8, 4, 2 and 1.
      const auto part = [&]<int N>() {
        if constexpr (N < L)
          if ((hi - ox) & N) inside<N>(in + (ox - lo) * S * L, bias, activate, y + ox * L), ox += N;
      };
      part.template operator()<8>();
      part.template operator()<4>();
      part.template operator()<2>();
      part.template operator()<1>();
    }
    checked_run(oy, hi, out_w, bias, activate, y);
  }
};

// Output positions [lo, hi) along one axis whose windows (extent wide, S apart) lie in
// the input's `size`, `pad` before its first.
inline std::pair<int64_t, int64_t> inside_span(int64_t pad, int64_t size, int64_t out, int64_t extent, int64_t stride) {
  const int64_t lo = std::min(out, (pad + stride - 1) / stride);
  const int64_t last = size - extent + pad;  // the last window start in the image, padded
  return {lo, last < 0 ? lo : std::clamp<int64_t>(last / stride + 1, lo, out)};
}

// Whether the tile-less NCHWc path takes the layer, lanes channels per vector: where its
// frame's bounds-checked taps cost less than the tile's copy. Each frame pixel checks
// its K x K taps; the tile copies its bands' rows (pitch wide, the halo of a band's
// window rows copied again by the next band). Measured with bench/conv_bench.cc (the
// _nchwc cases, one thread, Zen 4; docs/performance.md), the tile ran 0.6-0.85x the
// in-place time on AVX2 where the frame's taps were at least 1.8x the tile's pixels
// (3x3 windows on 14x14 and 7x7, 5x5 ones on 28x28 and 14x14, stride 2 on 14x14 too,
// ConvNeXt's 7x7 on 56x56), in place 0.5-0.85x where they were at most 1.1x (3x3 from
// 28x28, every stride-2 layer of 3x3 windows or larger planes); on AVX-512, whose
// copies move twice the bytes per pixel, the tile won from 7.4x (0.75-0.87x: 5x5 on
// 14x14, 7x7 on 14x14), in place up to 4.8x (0.8-0.9x: 3x3 on 14x14, 7x7 on 56x56, 5x5
// stride 2 on 14x14), the two alike between (3x3 on 7x7: 2.7x, 0.95-0.98x; 5x5 on 28x28:
// 5.1x, 0.99x).
inline bool reads_in_place(const ConvGeometry& s, int64_t lanes) {
  const int64_t extent = (s.win.kh - 1) * s.win.dh + 1;
  const auto [lo, hi] = inside_span(s.win.pad_left, s.w, s.out_w, extent, s.win.sw);
  const auto [row_lo, row_hi] = inside_span(s.win.pad_top, s.h, s.out_h, extent, s.win.sh);
  const int64_t frame = s.out_h * s.out_w - (hi - lo) * (row_hi - row_lo);
  const LaneLayout lay = lane_layout(s, lanes);
  const int64_t copied = lay.bands * lay.tile_rows * lay.pitch;
  // Taps over copied pixels below 1.5 on AVX2, 5 on AVX-512.
  return 2 * frame * s.win.kh * s.win.kw < copied * (lanes >= 16 ? 10 : 3);
}

// One output row of NCHWc sums (w pixels of V::size channels at row) into the V::size
// NCHW planes at y, plane floats apart: V::size pixels at a time, transposed.
template <class V>
void store_row_planes(const float* row, int64_t w, float* y, int64_t plane) {
  constexpr int64_t L = V::size;
  for (int64_t p = 0; p < w; p += L) {
    const int64_t n = std::min(L, w - p);
    V r[L];
#pragma GCC unroll 16
    for (int64_t j = 0; j < L; ++j) r[j] = j < n ? V::load_unaligned(row + (p + j) * L) : V(0.0f);
    transpose_square(r);
    if (n == L) {
#pragma GCC unroll 16
      for (int64_t c = 0; c < L; ++c) r[c].store_unaligned(y + c * plane + p);
    } else {
      for (int64_t c = 0; c < L; ++c) store_first_n(r[c], y + c * plane + p, n);
    }
  }
}

// NCHWc in, NCHWc (BlockedOut) or NCHW out, with no tile: an NCHW output's rows are
// summed into a row of NCHWc scratch and transposed into the planes from there, as the
// tile's sums are.
template <class V, int K, int S, bool Dilated, bool BlockedOut>
void depthwise_lanes_blocked(const DepthwiseJob& job, int64_t begin, int64_t end, float* scratch) {
  constexpr int64_t L = V::size;
  const ConvGeometry& s = *job.shape;
  const LaneLayout lay = lane_layout(s, L);
  const int64_t extent = (K - 1) * s.win.dh + 1;
  // Output columns [lo, hi) and rows [row_lo, row_hi) whose windows lie in the image
  // (plain variables: clang 14 cannot capture structured bindings in the lambda below).
  const std::pair<int64_t, int64_t> cols = inside_span(s.win.pad_left, s.w, s.out_w, extent, S);
  const std::pair<int64_t, int64_t> rows = inside_span(s.win.pad_top, s.h, s.out_h, extent, S);
  const int64_t lo = cols.first, hi = cols.second, row_lo = rows.first, row_hi = rows.second;
  // In the scratch depthwise_thread_floats sizes for the tile: the row fits in the
  // tile's place (its pitch is at least out_w).
  float* weights = scratch;
  float* zeros = weights + K * K * L;
  float* row_sums = zeros + L;  // NCHW output: one output row, out_w * L floats
  std::fill(zeros, zeros + L, 0.0f);
  const int64_t in_plane = s.h * s.w, out_plane = s.out_h * s.out_w;
  const Activation act = *job.activation;  // a local copy: stores to y cannot alias it
  const bool in_registers = activation_in_registers(act);
  with_activation<V>(act, [&](auto activate) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t band = i % lay.bands, g = i / lay.bands % lay.groups, n = i / lay.bands / lay.groups;
      const int64_t c0 = g * L, block = n * s.cin + c0;
      const int64_t oy0 = band * lay.band_rows, oy1 = std::min(s.out_h, oy0 + lay.band_rows);
      pack_weights<V, K>(job.weights + c0 * K * K, L, weights);
      const V bias = job.bias ? V::load_unaligned(job.bias + c0) : V(0.0f);
      const BlockedPlane<V, K, S, Dilated> plane{job.x + block * in_plane, s.h,      s.w,     s.win.pad_top,
                                                 s.win.pad_left,           s.win.dh, weights, zeros};
      // The group's block (NCHWc) or its first plane (NCHW): both block * out_plane floats in.
      float* y = job.y + block * out_plane;
      for (int64_t oy = oy0; oy < oy1; ++oy) {
        const bool row_inside = oy >= row_lo && oy < row_hi;
        if constexpr (BlockedOut) {
          plane.row(oy, s.out_w, lo, hi, row_inside, bias, activate, y + oy * s.out_w * L);
        } else {
          plane.row(oy, s.out_w, lo, hi, row_inside, bias, activate, row_sums);
          if (!in_registers) act.apply(row_sums, s.out_w * L);
          store_row_planes<V>(row_sums, s.out_w, y + oy * s.out_w, out_plane);
        }
      }
      if (BlockedOut && !in_registers) act.apply(y + oy0 * s.out_w * L, (oy1 - oy0) * s.out_w * L);
    }
  });
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
// An NCHWc input is read in place (reads_in_place); into an NCHW output only on planes of
// 56x56 pixels or more, as its rows of sums are transposed from scratch where the
// tile's are from registers: in conv_bench's _nchwc_in cases in place took 0.53-0.94x the
// tile's time there (MobileNetV1's and V2's 112x112 and 56x56 layers, EfficientNet-B0's
// but its 5x5 stride-2 one on AVX2: 1.1x), on smaller planes 0.75-1.7x (Zen 4).
template <class V, int K, int S>
void depthwise_lanes(const DepthwiseJob& job, int64_t begin, int64_t end, float* scratch) {
  constexpr int64_t L = V::size;
  const ConvGeometry& s = *job.shape;
  if (job.layouts.input_blocked && reads_in_place(s, L) && (job.layouts.output_blocked || s.h * s.w >= 56 * 56)) {
    const bool dilated = s.win.dh != 1;
    if (job.layouts.output_blocked)
      (dilated ? depthwise_lanes_blocked<V, K, S, true, true>
               : depthwise_lanes_blocked<V, K, S, false, true>)(job, begin, end, scratch);
    else
      (dilated ? depthwise_lanes_blocked<V, K, S, true, false>
               : depthwise_lanes_blocked<V, K, S, false, false>)(job, begin, end, scratch);
  } else if (s.win.dh == 1)
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
