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
#pragma GCC unroll 5
  for (int ki = 0; ki < K; ++ki) {
    const float* row = in + ki * row_len + ox;
#pragma GCC unroll 5
    for (int kj = 0; kj < K; ++kj)
      acc = multiply_add(V::load_unaligned(row + (kj % S) * phase_len + kj / S), wk[ki * K + kj], acc);
  }
  return acc;
}

// The padded plane is zeroed once per call; each plane then only copies its rows into
// the interior, so the padding costs nothing per plane (small late layers have many
// planes of a few rows each).
template <class V, int K, int S>
void depthwise_planes(const DepthwiseJob& job, int64_t begin, int64_t end, float* scratch) {
  static_assert(S == 1 || S == 2);
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
      for (int64_t oy = 0; oy < s.out_h; ++oy) {
        const float* in = scratch + oy * S * row_len;
        float* out = y + oy * s.out_w;
        for (int64_t ox = 0; ox < full; ox += W)
          activate(window_sum<V, K, S>(in, row_len, phase_len, ox, wk, b)).store_unaligned(out + ox);
        if (full < s.out_w) {
          const V tail = activate(window_sum<V, K, S>(in, row_len, phase_len, full, wk, b));
          // A whole vector when it stays in the plane: its extra lanes land on the next
          // rows, which are computed (and overwritten) after this one.
          if (oy * s.out_w + full + W <= plane)
            tail.store_unaligned(out + full);
          else
            store_first(tail, out + full, s.out_w - full);
        }
        if (!in_registers) act.apply(out, s.out_w);
      }
    }
  });
}

// The four kernels of one target, in the order find_depthwise_kernel expects.
template <class V>
constexpr std::array<DepthwiseKernel, 4> depthwise_kernel_table(Isa isa, const char* k3s1, const char* k3s2,
                                                                const char* k5s1, const char* k5s2) {
  constexpr int lanes = static_cast<int>(V::size);
  return {{{k3s1, isa, 3, 1, lanes, &depthwise_planes<V, 3, 1>},
           {k3s2, isa, 3, 2, lanes, &depthwise_planes<V, 3, 2>},
           {k5s1, isa, 5, 1, lanes, &depthwise_planes<V, 5, 1>},
           {k5s2, isa, 5, 2, lanes, &depthwise_planes<V, 5, 2>}}};
}

}  // namespace
}  // namespace minfer::kernels
