// The direct convolution row kernel, written once over a vector type and instantiated per
// target by direct_conv_<isa>.cc, each compiled with its ISA flags. Only those files
// include this header; everything here has internal linkage.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ops/kernels/direct_conv.h"
#include "ops/kernels/lane_transpose.h"
#include "ops/kernels/padded_rows.h"
#include "ops/kernels/simd.h"

namespace minfer::kernels {
namespace {

struct DirectConvTile {
  const float* panel;     // the band's padded rows from the first its output row reads, at its first column
  int64_t taps;           // cin * kh * kw
  const int64_t* tap_at;  // [taps]: where tap t reads, from the panel
  const float* weights;   // the tile's first output channel; channels ckk apart, tap t at [t]
  int64_t ckk;
  const float* bias;  // the tile's first output channel, or null
  float* y;           // the tile's first output: channels `plane` apart
  int64_t plane;
  int64_t last_lanes;  // lanes stored of the tile's last vector
};

// An R output channels x NV vectors tile: every input vector loaded feeds R multiply-adds.
template <class V, int R, int NV, class Activate>
void direct_conv_tile(const DirectConvTile& t, Activate activate) {
  constexpr int64_t W = V::size;
  // The bias through a pointer, one zero where there is none: a branch there, a store of
  // the last vector under one and the activation through a pointer each kept GCC from
  // holding the accumulators in registers at either end of the taps' loop.
  static constexpr float kZero = 0.0f;
  const float* bias = t.bias ? t.bias : &kZero;
  const int64_t bias_step = t.bias ? 1 : 0;
  V acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[r][v] = V(bias[r * bias_step]);
  // One flat loop over the taps: nested over rows and kernel columns, GCC kept the
  // accumulators in memory between rows (a load and a store of each per kh * cin rows).
  // At least one tap, so no path skips the loop (one did: the accumulators in memory).
  int64_t tap = 0;
  do {
    const float* src = t.panel + t.tap_at[tap];
    V x[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) x[v] = V::load_unaligned(src + v * W);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const V wv(t.weights[r * t.ckk + tap]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] = multiply_add(x[v], wv, acc[r][v]);
    }
  } while (++tap < t.taps);
  if constexpr (kActivatesInGroups<Activate>) {
    activate_all<R * NV>(activate, &acc[0][0]);
  } else {  // one by one: through activate_all's pointer they went to memory
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = activate(acc[r][v]);
  }
  for (int r = 0; r < R; ++r) {
    float* y = t.y + r * t.plane;
    for (int v = 0; v + 1 < NV; ++v) acc[r][v].store_unaligned(y + v * W);
    // Under a mask: the last vector's extra lanes would land on the next output row, which
    // another thread may be writing.
    if constexpr (W == 1)
      acc[r][NV - 1].store_unaligned(y + (NV - 1) * W);
    else
      store_first_n(acc[r][NV - 1], y + (NV - 1) * W, t.last_lanes);
  }
}

// The tile for r <= R channels and nv <= NV vectors (the edges of the output).
template <class V, int R, int NV, class Activate>
void direct_conv_edge_tile(int r, int nv, const DirectConvTile& t, Activate activate) {
  if constexpr (R > 1)
    if (r < R) return direct_conv_edge_tile<V, R - 1, NV>(r, nv, t, activate);
  if constexpr (NV > 1)
    if (nv < NV) return direct_conv_edge_tile<V, R, NV - 1>(r, nv, t, activate);
  direct_conv_tile<V, R, NV>(t, activate);
}

template <class V, int R, int NV>
void direct_conv_rows(const DirectConvRow& a) {
  constexpr int64_t W = V::size;
  const ConvGeometry& s = *a.shape;
  const Window2d& win = s.win;
  const Activation act = *a.activation;  // a local copy: stores to y cannot alias it
  const int64_t phase_len = padded_phase_len(s.out_w, W, win.kw, win.dw, win.sw);
  const int64_t row_len = win.sw * phase_len, in_rows = direct_conv_band_input_rows(s, a.rows);
  // Each channel's padded input rows of the band once, in order (output row oy + b reads
  // rows b * sh + ki * dh of them, the rows its neighbours read too): a 3x3 stride-2
  // layer copies 2 rows a channel per output row, not 3; a 7x7 one 2, not 7. Rows no
  // window reads (a stride past the window) are skipped.
  for (int64_t r = 0; r < in_rows; ++r) {
    bool read = false;
    for (int64_t ki = 0; ki < win.kh && !read; ++ki) {
      const int64_t from = r - ki * win.dh;
      read = from >= 0 && from % win.sh == 0 && from / win.sh < a.rows;
    }
    if (!read) continue;
    const int64_t iy = a.oy * win.sh - win.pad_top + r;
    for (int64_t ci = 0; ci < s.cin; ++ci) {
      const float* src = iy >= 0 && iy < s.h ? a.x + (ci * s.h + iy) * s.w : nullptr;
      float* dst = a.scratch + (ci * in_rows + r) * row_len;
      if (win.sw == 2)
        fill_padded_row_stride2<V>(src, s.w, win.pad_left, phase_len, dst);
      else
        fill_padded_row(src, s.w, win.pad_left, win.sw, phase_len, dst);
    }
  }
  int64_t tap_at[kDirectConvMaxTaps];
  const int64_t taps = s.cin * win.kh * win.kw;
  for (int64_t kj = 0; kj < win.kw; ++kj) {
    const int64_t t = kj * win.dw, offset = (t % win.sw) * phase_len + t / win.sw;
    for (int64_t ci = 0; ci < s.cin; ++ci)
      for (int64_t ki = 0; ki < win.kh; ++ki)
        tap_at[(ci * win.kh + ki) * win.kw + kj] = (ci * in_rows + ki * win.dh) * row_len + offset;
  }
  const int64_t plane = s.out_h * s.out_w, ckk = taps;
  DirectConvTile t{a.scratch, taps, tap_at, nullptr, ckk, nullptr, nullptr, plane, W};
  with_activation<V>(act, [&](auto activate) {
    for (int64_t oc = 0; oc < s.cout; oc += R) {
      const int channels = static_cast<int>(std::min<int64_t>(R, s.cout - oc));
      t.weights = a.weights + oc * ckk;
      t.bias = a.bias ? a.bias + oc : nullptr;
      for (int64_t b = 0; b < a.rows; ++b) {
        // The row's vectors in tiles of near-equal width: 7 vectors are 3 + 2 + 2, not
        // 3 + 3 + 1 (a one-vector tile does R multiply-adds per tap around its loads and
        // loop: ResNet-18's 112-wide first layer spent a quarter of its time in it).
        const int64_t row_vectors = (s.out_w + W - 1) / W, n = (row_vectors + NV - 1) / NV;
        for (int64_t i = 0, ox = 0; i < n; ++i) {
          const int64_t tile_vectors = row_vectors / n + (i < row_vectors % n ? 1 : 0);
          const int64_t cols = std::min<int64_t>(tile_vectors * W, s.out_w - ox);
          const int vectors = static_cast<int>(tile_vectors);
          t.panel = a.scratch + b * win.sh * row_len + ox;
          t.y = a.y + oc * plane + (a.oy + b) * s.out_w + ox;
          t.last_lanes = cols - (vectors - 1) * W;
          if (channels == R && vectors == NV)
            direct_conv_tile<V, R, NV>(t, activate);
          else
            direct_conv_edge_tile<V, R, NV>(channels, vectors, t, activate);
          ox += cols;
        }
      }
    }
  });
  if (!activation_in_registers(act))
    for (int64_t oc = 0; oc < s.cout; ++oc) act.apply(a.y + oc * plane + a.oy * s.out_w, a.rows * s.out_w);
}

}  // namespace
}  // namespace minfer::kernels
