// The depthwise plane kernel, written once over a vector type and instantiated per target
// by depthwise_conv_<isa>.cc, each compiled with its ISA flags. Only those files include
// this header; everything here has internal linkage.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ops/kernels/depthwise_conv.h"
#include "ops/kernels/padded_rows.h"
#include "ops/kernels/simd.h"

namespace minfer::kernels {
namespace {

// bias + the K x K window of output columns [ox, ox + V::size) whose top padded row is
// `in` (rows row_len apart, each split into S phases of phase_len floats).
template <class V, int K, int S>
inline V window_sum(const float* in, int64_t row_len, int64_t phase_len, int64_t ox, const V (&wk)[K * K], V bias) {
  V acc = bias;
#pragma GCC unroll 7
  for (int ki = 0; ki < K; ++ki) {
    const float* row = in + ki * row_len + ox;
#pragma GCC unroll 7
    for (int kj = 0; kj < K; ++kj)
      acc = multiply_add(V::load_unaligned(row + (kj % S) * phase_len + kj / S), wk[ki * K + kj], acc);
  }
  return acc;
}

// window_sum for the output rows `in` (sums[0]) and the next (sums[1], S padded rows
// lower) at once: each input row the two windows share is loaded once for both. Each sum
// takes its taps in window_sum's order, so the bits are its bits. On Zen 5 most of a 3x3
// window's loads straddle cache lines (a 512-bit one then takes two of the core's load
// slots), and those loads, not the multiply-adds, bound the kernel: the MobileNets'
// 112-wide layers took 0.82-0.87x the time in pairs (AVX2 0.90-0.92x).
template <class V, int K, int S>
inline void window_sum_pair(const float* in, int64_t row_len, int64_t phase_len, int64_t ox, const V (&wk)[K * K],
                            V bias, V (&sums)[2]) {
  sums[0] = sums[1] = bias;
#pragma GCC unroll 9
  for (int i = 0; i < K + S; ++i) {
    const float* row = in + i * row_len + ox;
#pragma GCC unroll 7
    for (int kj = 0; kj < K; ++kj) {
      const V x = load_to_register<V>(row + (kj % S) * phase_len + kj / S);
      if (i < K) sums[0] = multiply_add(x, wk[i * K + kj], sums[0]);
      if (i >= S) sums[1] = multiply_add(x, wk[(i - S) * K + kj], sums[1]);
    }
  }
}

// Planes at most half a vector wide (the 7x7 planes of the last stage), stride 1: one
// output vector per row would leave most of its lanes idle, so the padded plane is stored
// flat, rows pitch = out_w + K - 1 apart, and the outputs are computed on that pitch:
// output (oy, ox) is flat index oy * pitch + ox, each tap a constant offset from it, so a
// 7x7 plane is 4 (3x3) or 5 (5x5) vectors instead of 7. The pitch's extra K - 1 columns
// per row are computed and dropped when the rows are copied out.
constexpr int64_t kFlatPlaneMaxOutputs = 256;  // out_h * pitch, so the flat outputs fit on the stack

inline bool flat_plane_fits(const ConvGeometry& s, int64_t lanes, int k) {
  return 2 * s.out_w <= lanes && s.out_h * (s.out_w + k - 1) <= kFlatPlaneMaxOutputs;
}

template <class V, int K>
void depthwise_flat_planes(const DepthwiseJob& job, int64_t begin, int64_t end, float* scratch) {
  constexpr int64_t W = V::size;
  const ConvGeometry& s = *job.shape;
  const int64_t pad_top = s.win.pad_top, pad_left = s.win.pad_left;
  const Activation act = *job.activation;  // a local copy: stores to y cannot alias it
  const int64_t pitch = s.out_w + K - 1, rows = s.out_h + K - 1;
  const int64_t outputs = s.out_h * pitch;
  // The last vector reads up to W - 1 floats past rows * pitch; the scratch, sized for
  // rows of at least out_w + W - 1 floats (scratch_floats), has room for them.
  std::fill(scratch, scratch + rows * pitch + W, 0.0f);
  const PhaseColumns columns = phase_columns(s.w, pad_left, 1, 0, pitch);
  const int64_t first_row = std::min(pad_top, rows), end_row = std::min(pad_top + s.h, rows);
  const bool in_registers = activation_in_registers(act);
  const int64_t plane = s.out_h * s.out_w;
  alignas(64) float flat[kFlatPlaneMaxOutputs + W];
  with_activation<V>(act, [&](auto activate) {
    constexpr bool kAfter = kActivatesInGroups<decltype(activate)>;  // over the flat outputs at once
    for (int64_t i = begin; i < end; ++i) {
      const int64_t c = i % s.cin;
      const float* x = job.x + i * s.h * s.w;
      for (int64_t r = first_row; r < end_row; ++r)
        copy_phase(x + (r - pad_top) * s.w, pad_left, 1, 0, columns, scratch + r * pitch);
      V wk[K * K];
      for (int t = 0; t < K * K; ++t) wk[t] = V(job.weights[c * K * K + t]);
      const V b(job.bias ? job.bias[c] : 0.0f);
      for (int64_t q = 0; q < outputs; q += W) {
        V acc = b;
#pragma GCC unroll 7
        for (int ki = 0; ki < K; ++ki)
#pragma GCC unroll 7
          for (int kj = 0; kj < K; ++kj)
            acc = multiply_add(V::load_unaligned(scratch + q + ki * pitch + kj), wk[ki * K + kj], acc);
        (kAfter ? acc : activate(acc)).store_unaligned(flat + q);
      }
      if constexpr (kAfter) activate_span(activate, flat, (outputs + W - 1) / W * W);
      float* y = job.y + i * plane;
      for (int64_t oy = 0; oy < s.out_h; ++oy)
        for (int64_t ox = 0; ox < s.out_w; ++ox) y[oy * s.out_w + ox] = flat[oy * pitch + ox];
      if (!in_registers) act.apply(y, plane);
    }
  });
}

// The padded plane is zeroed once per call; each plane then only copies its rows into
// the interior, so the padding costs nothing per plane (small late layers have many
// planes of a few rows each).
template <class V, int K, int S>
void depthwise_planes(const DepthwiseJob& job, int64_t begin, int64_t end, float* scratch) {
  static_assert(S == 1 || S == 2);
  if constexpr (S == 1 && V::size > 1)
    if (flat_plane_fits(*job.shape, V::size, K)) return depthwise_flat_planes<V, K>(job, begin, end, scratch);
  constexpr int64_t W = V::size;
  const ConvGeometry& s = *job.shape;
  const int64_t pad_top = s.win.pad_top, pad_left = s.win.pad_left;
  const Activation act = *job.activation;  // a local copy: stores to y cannot alias it
  const int64_t phase_len = padded_phase_len(s.out_w, W, K, 1, S);
  const int64_t row_len = S * phase_len;
  const int64_t rows = (s.out_h - 1) * S + K;
  std::fill(scratch, scratch + rows * row_len, 0.0f);
  PhaseColumns columns[S];
  for (int p = 0; p < S; ++p) columns[p] = phase_columns(s.w, pad_left, S, p, phase_len);
  const int64_t first_row = std::min(pad_top, rows), end_row = std::min(pad_top + s.h, rows);
  const bool in_registers = activation_in_registers(act);
  const int64_t full = s.out_w / W * W, plane = s.out_h * s.out_w;
  with_activation<V>(act, [&](auto activate) {
    constexpr bool kAfter = kActivatesInGroups<decltype(activate)>;  // over the plane at once
    const auto in_rows = [&](V x) { return kAfter ? x : activate(x); };
    for (int64_t i = begin; i < end; ++i) {
      const int64_t c = i % s.cin;
      const float* x = job.x + i * s.h * s.w;
      for (int64_t r = first_row; r < end_row; ++r) {
        if constexpr (S == 2)
          copy_row_stride2<V>(x + (r - pad_top) * s.w, pad_left, columns, phase_len, scratch + r * row_len);
        else
          copy_phase(x + (r - pad_top) * s.w, pad_left, S, 0, columns[0], scratch + r * row_len);
      }
      V wk[K * K];
      for (int t = 0; t < K * K; ++t) wk[t] = V(job.weights[c * K * K + t]);
      const V b(job.bias ? job.bias[c] : 0.0f);
      float* y = job.y + i * plane;
      // A row's last, partial vector. A whole vector when it stays in the plane: its extra
      // lanes land on the next rows, whose vectors are stored (over them) after it.
      const auto row_tail = [&](int64_t oy) {
        if (full == s.out_w) return;
        const V tail = in_rows(window_sum<V, K, S>(scratch + oy * S * row_len, row_len, phase_len, full, wk, b));
        float* out = y + oy * s.out_w + full;
        if (oy * s.out_w + full + W <= plane)
          tail.store_unaligned(out);
        else
          store_first(tail, out, s.out_w - full);
      };
      int64_t oy = 0;
      for (; oy + 1 < s.out_h; oy += 2) {
        const float* in = scratch + oy * S * row_len;
        float* out = y + oy * s.out_w;
        row_tail(oy);
        for (int64_t ox = 0; ox < full; ox += W) {
          V sums[2];
          window_sum_pair<V, K, S>(in, row_len, phase_len, ox, wk, b, sums);
          in_rows(sums[0]).store_unaligned(out + ox);
          in_rows(sums[1]).store_unaligned(out + s.out_w + ox);
        }
        row_tail(oy + 1);
        if (!in_registers) act.apply(out, 2 * s.out_w);
      }
      if (oy < s.out_h) {
        float* out = y + oy * s.out_w;
        for (int64_t ox = 0; ox < full; ox += W)
          in_rows(window_sum<V, K, S>(scratch + oy * S * row_len, row_len, phase_len, ox, wk, b))
              .store_unaligned(out + ox);
        row_tail(oy);
        if (!in_registers) act.apply(out, s.out_w);
      }
      if constexpr (kAfter) activate_span(activate, y, plane);
    }
  });
}

// The kernels of one target, one per window of kDepthwiseWindows, in its order.
template <class V>
constexpr std::array<DepthwiseKernel, kDepthwiseWindows> depthwise_kernel_table(
    Isa isa, const std::array<const char*, kDepthwiseWindows>& names) {
  constexpr int lanes = static_cast<int>(V::size);
  return {{{names[0], isa, 3, 1, lanes, false, &depthwise_planes<V, 3, 1>},
           {names[1], isa, 3, 2, lanes, false, &depthwise_planes<V, 3, 2>},
           {names[2], isa, 5, 1, lanes, false, &depthwise_planes<V, 5, 1>},
           {names[3], isa, 5, 2, lanes, false, &depthwise_planes<V, 5, 2>},
           {names[4], isa, 7, 1, lanes, false, &depthwise_planes<V, 7, 1>},
           {names[5], isa, 7, 2, lanes, false, &depthwise_planes<V, 7, 2>}}};
}

}  // namespace
}  // namespace minfer::kernels
