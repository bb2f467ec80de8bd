// The depthwise plane kernel, written once over a vector type and instantiated per target
// by depthwise_conv_<isa>.cc, each compiled with its ISA flags. Only those files include
// this header; everything here has internal linkage.
#pragma once

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

template <class V, int K, int S>
void depthwise_plane(const DepthwisePlane& p, const float* x, const float* kernel, float bias,
                     const Activation& activation, float* y, float* scratch) {
  constexpr int64_t W = V::size;
  const Activation act = activation;  // a local copy: stores to y cannot alias it
  const int64_t phase_len = padded_phase_len(p.out_w, W, K, 1, S);
  const int64_t row_len = S * phase_len;
  const int64_t rows = (p.out_h - 1) * S + K;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t iy = r - p.pad_top;
    fill_padded_row(iy >= 0 && iy < p.h ? x + iy * p.w : nullptr, p.w, p.pad_left, S, phase_len, scratch + r * row_len);
  }
  V wk[K * K];
  for (int t = 0; t < K * K; ++t) wk[t] = V(kernel[t]);
  const V b(bias);
  const bool in_registers = activation_in_registers(act);
  const int64_t full = p.out_w / W * W;
  for (int64_t oy = 0; oy < p.out_h; ++oy) {
    const float* in = scratch + oy * S * row_len;
    float* out = y + oy * p.out_w;
    for (int64_t ox = 0; ox < full; ox += W)
      activate(window_sum<V, K, S>(in, row_len, phase_len, ox, wk, b), act).store_unaligned(out + ox);
    if (full < p.out_w)
      store_first(activate(window_sum<V, K, S>(in, row_len, phase_len, full, wk, b), act), out + full, p.out_w - full);
    if (!in_registers) act.apply(out, p.out_w);
  }
}

// The four kernels of one target, in the order find_depthwise_kernel expects.
template <class V>
constexpr std::array<DepthwiseKernel, 4> depthwise_kernel_table(Isa isa, const char* k3s1, const char* k3s2,
                                                                const char* k5s1, const char* k5s2) {
  constexpr int lanes = static_cast<int>(V::size);
  return {{{k3s1, isa, 3, 1, lanes, &depthwise_plane<V, 3, 1>},
           {k3s2, isa, 3, 2, lanes, &depthwise_plane<V, 3, 2>},
           {k5s1, isa, 5, 1, lanes, &depthwise_plane<V, 5, 1>},
           {k5s2, isa, 5, 2, lanes, &depthwise_plane<V, 5, 2>}}};
}

}  // namespace
}  // namespace minfer::kernels
