// The direct pointwise kernel, written once over a vector type and instantiated per
// target by pointwise_conv_<isa>.cc, each compiled with its ISA flags. Only those files
// include this header; everything here has internal linkage.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "ops/kernels/lane_transpose.h"
#include "ops/kernels/pointwise_conv.h"
#include "ops/kernels/simd.h"

namespace minfer::kernels {
namespace {

// Where one tile reads and writes: output channels [co, co + CB) of pixels [p, ...).
struct PointwiseTile {
  const float* x;         // input channel 0's row at the tile's first pixel; rows `pixels` apart
  const float* w;         // the block's packed weights: [k][CB]
  const float* bias;      // at channel co, or null
  const float* residual;  // at (co, p), or null; rows `pixels` apart
  float* y;               // at (co, p)
  int64_t k, pixels;
  int tail;  // Tail tiles: the pixels of their last vector, a partial one
};

// The vector the sums of a tail of at most half of V's lanes run in: AVX-512's tails of up
// to 8 pixels in AVX2 vectors (Zen 4 runs a 512-bit multiply-add as two 256-bit halves:
// the same sums, lane by lane, in half the cycles). Loaded and stored as V, under V's mask.
template <class V>
struct TailSums {
  using type = V;
};
#if XSIMD_WITH_AVX512F
template <>
struct TailSums<Avx512Vec> {
  using type = Avx2Vec;
};
#endif

// v as a To vector: itself, its lower half, or zero-extended (AVX-512 <-> AVX2 vectors).
template <class To, class From>
inline To resized(From v) {
  if constexpr (std::is_same_v<To, From>)
    return v;
  else if constexpr (To::size < From::size)
    return _mm512_castps512_ps256(v);
  else
    return _mm512_zextps256_ps512(v);
}

// acc[c][v] = sum over input channels of w[.][c] * x[.][v-th vector], then the epilogue:
// + bias, + residual, activate, stored. Tail: the last vector holds t.tail < W pixels,
// loaded and stored under a mask; a tail tile of one vector sums in A (V, or
// TailSums<V>::type when the tail fits in it).
template <class V, int CB, int PV, bool Tail, class Activate, class A = V>
[[gnu::always_inline]] inline void pointwise_tile(const PointwiseTile& t, Activate activate) {
  constexpr int64_t W = V::size;
  static_assert(PV == 1 || std::is_same_v<A, V>);
  static_assert(Tail || std::is_same_v<A, V>);
  // Whether vector v is the partial last one.
  constexpr auto partial = [](int v) { return Tail && v == PV - 1; };
  A acc[CB][PV];
#pragma GCC unroll 8
  for (int c = 0; c < CB; ++c)
#pragma GCC unroll 4
    for (int v = 0; v < PV; ++v) acc[c][v] = A(0.0f);
  const float* x = t.x;
  const float* w = t.w;
#pragma GCC unroll 2
  for (int64_t kk = 0; kk < t.k; ++kk, x += t.pixels, w += CB) {
    A xv[PV];
#pragma GCC unroll 4
    for (int v = 0; v < PV; ++v) {
      if (partial(v))
        xv[v] = resized<A>(load_first_n(x + v * W, t.tail, V()));
      else
        xv[v] = resized<A>(V::load_unaligned(x + v * W));
    }
#pragma GCC unroll 8
    for (int c = 0; c < CB; ++c) {
      const A wc(w[c]);
#pragma GCC unroll 4
      for (int v = 0; v < PV; ++v) acc[c][v] = multiply_add(wc, xv[v], acc[c][v]);
    }
  }
  V r[CB * PV];
#pragma GCC unroll 8
  for (int c = 0; c < CB; ++c) {
    const float* rc = t.residual ? t.residual + c * t.pixels : nullptr;
#pragma GCC unroll 4
    for (int v = 0; v < PV; ++v) {
      V& rv = r[c * PV + v];
      rv = resized<V>(acc[c][v]);
      if (t.bias) rv += V(t.bias[c]);
      if (rc) rv += partial(v) ? load_first_n(rc + v * W, t.tail, V()) : V::load_unaligned(rc + v * W);
    }
  }
  activate_all<CB * PV>(activate, r);
#pragma GCC unroll 8
  for (int c = 0; c < CB; ++c) {
    float* yc = t.y + c * t.pixels;
#pragma GCC unroll 4
    for (int v = 0; v < PV; ++v) {
      if (partial(v))
        store_first_n(r[c * PV + v], yc + v * W, t.tail);
      else
        r[c * PV + v].store_unaligned(yc + v * W);
    }
  }
}

// The tiles of one block of output channels over pixel block [p, p + n) short of a
// full one (an image's last block): one tile of its vectors, the last one partial. A
// partial vector alone sums in TailSums<V>::type where it fits; with whole vectors
// before it, in the same tile (SqueezeNet's 13x13 layers end each image's 169 pixels with 25: as a
// tile of a vector and a tail's, whose six weights' loads fed six multiply-adds each,
// its 512 -> 1000 layer took 1.05-1.08x the time of one tile of 16 + 9; Zen 5). Out of
// the full tiles' loop: inlined beside them, the full tiles of SqueezeNet's 1x1 layers
// at 55x55 (16 input channels) took 1.1x the time.
template <class V, int CB, int PV, class Activate>
[[gnu::noinline]] void pointwise_partial_block(PointwiseTile t, int64_t n, Activate activate) {
  constexpr int64_t W = V::size;
  const int64_t whole = n / W;
  t.tail = static_cast<int>(n - whole * W);
  if (t.tail == 0) {
    [&]<int... Vs>(std::integer_sequence<int, Vs...>) {
      // One branch per vector count below PV.
      ((whole == Vs + 1 ? pointwise_tile<V, CB, Vs + 1, false>(t, activate) : void()), ...);
    }
    (std::make_integer_sequence<int, PV - 1>{});
    return;
  }
  using Half = typename TailSums<V>::type;
  if (whole == 0 && t.tail <= static_cast<int>(Half::size)) {
    pointwise_tile<V, CB, 1, true, Activate, Half>(t, activate);
    return;
  }
  [&]<int... Vs>(std::integer_sequence<int, Vs...>) {
    // One branch per vector count up to PV, the last vector partial.
    ((whole == Vs ? pointwise_tile<V, CB, Vs + 1, true>(t, activate) : void()), ...);
  }
  (std::make_integer_sequence<int, PV>{});
}

// The tiles of one block of output channels over pixel block [p, p + n). AVX2 keeps an
// image's last block inline, as a tile of its whole vectors and one of its partial one:
// with 16 registers, 12 of them the 4 x 3 tile's sums, a call out of the loop (or the
// other tiles inlined beside it) left the full tile's loop spilling two registers, and
// MobileNetV3's 1x1 layers at 14x14 took 1.7x the time.
template <class V, int CB, int PV, class Activate>
[[gnu::always_inline]] inline void pointwise_block(PointwiseTile t, int64_t n, Activate activate) {
  constexpr int64_t W = V::size;
  if (n == PV * W) {
    pointwise_tile<V, CB, PV, false>(t, activate);
    return;
  }
  if constexpr (W > 8) {
    pointwise_partial_block<V, CB, PV>(t, n, activate);
  } else {
    const int64_t whole = n / W;
    [&]<int... Vs>(std::integer_sequence<int, Vs...>) {
      ((whole == Vs + 1 ? pointwise_tile<V, CB, Vs + 1, false>(t, activate) : void()), ...);
    }
    (std::make_integer_sequence<int, PV - 1>{});
    t.tail = static_cast<int>(n - whole * W);
    if (t.tail == 0) return;
    t.x += whole * W;
    t.y += whole * W;
    if (t.residual) t.residual += whole * W;
    pointwise_tile<V, CB, 1, true>(t, activate);
  }
}

// The kernel's run(): for each chunk of output channels, each span of pixel blocks of the
// range, each block of CB output channels in the chunk (the last one narrower: its own
// width), each pixel block of the span.
template <class V, int CB, int PV>
void pointwise_run(const PointwiseJob& job, int64_t image, int64_t begin, int64_t end) {
  constexpr int64_t P = PV * static_cast<int64_t>(V::size);
  const Activation act = *job.activation;  // a local copy: stores to y cannot alias it
  const bool in_registers = activation_in_registers(act);
  const int64_t in_image = job.k * job.pixels, out_image = job.m * job.pixels;
  PointwiseTile base{};
  base.k = job.k;
  base.pixels = job.pixels;
  with_activation<V>(act, [&](auto activate) {
    for (int64_t c0 = job.c_begin; c0 < job.c_end; c0 += job.chunk) {
      const int64_t c1 = std::min(job.c_end, c0 + job.chunk);
      for (int64_t b0 = begin; b0 < end; b0 += job.span)
        for (int64_t co = c0; co < c1; co += CB)
          for (int64_t b = b0; b < std::min(end, b0 + job.span); ++b) {
            const int64_t p = b * P, n = std::min(P, job.pixels - p);
            const int rows = static_cast<int>(std::min<int64_t>(CB, c1 - co));
            PointwiseTile t = base;
            t.x = job.x + image * in_image + p;
            t.w = job.weights + co * job.k;
            t.bias = job.bias ? job.bias + co : nullptr;
            t.residual = job.residual ? job.residual + image * out_image + co * job.pixels + p : nullptr;
            t.y = job.y + image * out_image + co * job.pixels + p;
            if (rows == CB) {
              pointwise_block<V, CB, PV>(t, n, activate);
            } else {
              [&]<int... Cs>(std::integer_sequence<int, Cs...>) {
                ((rows == Cs + 1 ? pointwise_block<V, Cs + 1, PV>(t, n, activate) : void()), ...);
              }
              (std::make_integer_sequence<int, CB - 1>{});
            }
            if (!in_registers)
              for (int r = 0; r < rows; ++r) act.apply(t.y + r * job.pixels, n);
          }
    }
  });
}

template <class V, int CB, int PV>
constexpr PointwiseKernel pointwise_kernel(Isa isa, const char* name) {
  return {name, isa, static_cast<int>(V::size), CB, PV, &pointwise_run<V, CB, PV>};
}

}  // namespace
}  // namespace minfer::kernels
