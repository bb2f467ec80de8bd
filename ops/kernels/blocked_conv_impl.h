// The blocked (NCHWc) convolution's row kernel, written once over a vector type and
// instantiated per target by blocked_conv_<isa>.cc, each compiled with its ISA flags.
// Only those files include this header; everything here has internal linkage.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "ops/kernels/blocked_conv.h"
#include "ops/kernels/simd.h"

namespace minfer::kernels {
namespace {

// Whether an AVX-512 tile of f blocks x p pixels broadcasts each input value into a
// register (shared by its f multiply-adds) rather than as every multiply-add's memory
// operand: where the accumulators, the weight vectors and two broadcasts fit the 32
// registers, and more than one block shares each. The memory-operand form loads each
// value f times: on Zen 5 (two 512-bit FMA pipes) a 4x7 tile's 32 loads per input channel
// held it at 6.0 multiply-adds per ns against 7.1 for register broadcasts (a loop of
// either over L1 data); on Zen 4 (one) both are FMA-bound. AVX2 always uses registers.
constexpr bool broadcast_in_register(int64_t lanes, int f, int p) {
  return lanes == 16 && f >= 2 && f * p + f + 2 <= 32;
}

// How a tile walks the window and its input blocks: kNchwPointwise is kPointwise on an
// NCHW input read in place, its lanes planes apart and its pixels adjacent.
enum class TileSums { kPointwise, kNchwPointwise, kTaps, kFewLanes };

// F output blocks x P output pixels: per input channel, F weight vectors (c output
// channels each) and P broadcast input values feed F*P multiply-adds, then `activate`
// (an Activate of with_activation). One function per walk and activation, each a
// straight run: the sums from zero, the start (the bias, what out holds, or both) added
// after them, the activation, the stores. With the start read first and the three walks
// and the activations' switch in one function, GCC kept the accumulators in memory
// between the parts (a store and a load of each at either end of the tile): 1x1 layers
// of 16 input channels took 1.15-1.25x the time (conv_bench's _nchwc cases, Zen 5; all
// its blocked cases 0.94x in geometric mean now, none slower on a second run). The start
// is added to the sums, not the sums to it: the same sums in another order. FromOut: the
// start is what out holds (plus init, where set: a residual there); else init alone (a
// chunk's first sums with a bias, or zeros), with no loads from out: a tile that read a
// vector of zeros for each of them spent a fifth of its time past the sums on 1x1 layers
// of 16 to 32 input channels, which took 0.86-0.93x the time without, the first layers
// and Winograd's sums on as few inputs 0.85-0.95x (conv_bench, Zen 4, both targets;
// layers of hundreds of inputs unchanged).
template <class V, int F, int P, TileSums S, bool FromOut, class A>
void blocked_conv_tile(const BlockedConvRow& r, const float* x, float* out, const A& activate) {
  constexpr int64_t C = V::size;
  const int64_t out_block = r.out_block;  // a local: stores to out cannot change it
  V acc[F][P];
#pragma GCC unroll 4
  for (int f = 0; f < F; ++f)
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) acc[f][p] = V(0.0f);
  const int64_t taps = r.kh * r.kw;
  // F x P multiply-adds for each of n input values: weights n vectors apart from wp,
  // inputs `lane` floats apart from xp, pixels `pixel` floats apart. Not unrolled:
  // unrolled 16 times, GCC interleaved the iterations' loads and spilled a third of the
  // accumulators (ResNet-18 4% slower on AVX-512, 12% on AVX2); rolled, the loop is the
  // loads, broadcasts and F x P FMAs.
  const auto sum = [&](const float* xp, const float* wp, int64_t n, int64_t pixel, int64_t lane = 1) {
#pragma GCC unroll 1
    for (int64_t ci = 0; ci < n; ++ci) {
      V w[F];
      for (int f = 0; f < F; ++f) w[f] = V::load_unaligned(wp + f * r.w_block + ci * C);
      const float* xc = xp + ci * lane;
      if constexpr (broadcast_in_register(V::size, F, P)) {
        for (int p = 0; p < P; ++p) {
          const V b(xc[p * pixel]);
          for (int f = 0; f < F; ++f) acc[f][p] = multiply_add(w[f], b, acc[f][p]);
        }
      } else {
        for (int p = 0; p < P; ++p)
          for (int f = 0; f < F; ++f) acc[f][p] = multiply_add_broadcast(w[f], xc + p * pixel, acc[f][p]);
      }
    }
  };
  if constexpr (S == TileSums::kPointwise) {
    // 1x1 windows: one loop over the input blocks, as over the taps below (nested in a
    // loop over blocks, GCC stored and reloaded every accumulator around each block).
    for (int64_t cb = 0; cb < r.cin_blocks; ++cb) sum(x + cb * r.x_block, r.w + cb * C * C, C, r.sw * C);
  } else if constexpr (S == TileSums::kNchwPointwise) {
    for (int64_t cb = 0; cb < r.cin_blocks; ++cb) sum(x + cb * r.x_block, r.w + cb * C * C, C, 1, r.x_lane);
  } else if constexpr (S == TileSums::kTaps) {
    for (int64_t cb = 0; cb < r.cin_blocks; ++cb) {
      const float* xb = x + cb * r.x_block;
      const float* wb = r.w + cb * r.w_taps * C * C;
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t ky = t / r.kw, kx = t % r.kw;
        sum(xb + ky * r.dh * r.x_row + kx * r.dw * C, wb + (ky * r.w_kw + kx) * C * C, C, r.sw * C);
      }
    }
  } else {
    // Fewer input lanes than a block (one block of Ci, say 6): with dilation 1 a window
    // row's taps x lanes are one run of kw * Ci inputs and of kw * Ci weight vectors,
    // summed in one loop rather than in a loop of Ci per tap. On whole blocks, where the
    // trip count is the constant C, the per-tap loop measured 1.04-1.12x faster.
    const int64_t ci_n = r.cin_lanes, pixel = r.sw * ci_n;
    const int64_t run = r.dw == 1 ? r.kw * ci_n : ci_n, runs = r.dw == 1 ? 1 : r.kw;
    for (int64_t cb = 0; cb < r.cin_blocks; ++cb) {
      const float* xb = x + cb * r.x_block;
      const float* wb = r.w + cb * r.w_taps * ci_n * C;
      for (int64_t ky = 0; ky < r.kh; ++ky)
        for (int64_t kx = 0; kx < runs; ++kx)
          sum(xb + ky * r.dh * r.x_row + kx * r.dw * ci_n, wb + (ky * r.w_kw + kx) * ci_n * C, run, pixel);
    }
  }
  if constexpr (FromOut) {
    // Branch-free (a branch kept the accumulators in memory too): without a bias the
    // loads read one vector of zeros.
    static constexpr float kZeros[C] = {};
    const float* init = r.init ? r.init : kZeros;
    const int64_t init_block = r.init ? C : 0;
#pragma GCC unroll 4
    for (int f = 0; f < F; ++f) {
      const V b = V::load_unaligned(init + f * init_block);
#pragma GCC unroll 16
      for (int p = 0; p < P; ++p) acc[f][p] += V::load_unaligned(out + f * out_block + p * C) + b;
    }
  } else {
#pragma GCC unroll 4
    for (int f = 0; f < F; ++f) {
      const V b = V::load_unaligned(r.init + f * C);
#pragma GCC unroll 16
      for (int p = 0; p < P; ++p) acc[f][p] += b;
    }
  }
  if constexpr (kActivatesInGroups<A>) {
    activate_all<F * P>(activate, &acc[0][0]);
  } else {  // one by one: through activate_all's pointer they went to memory
    for (int f = 0; f < F; ++f)
      for (int p = 0; p < P; ++p) acc[f][p] = activate(acc[f][p]);
  }
  for (int f = 0; f < F; ++f)
    for (int p = 0; p < P; ++p) acc[f][p].store_unaligned(out + f * out_block + p * C);
}

template <class A>
using BlockedTileFn = void (*)(const BlockedConvRow&, const float*, float*, const A&);

// The tiles of F blocks: [p] computes p pixels (index 0 unused).
template <class V, int F, TileSums S, bool FromOut, class A, int... P>
constexpr std::array<BlockedTileFn<A>, sizeof...(P) + 1> tiles_of(std::integer_sequence<int, P...>) {
  return {nullptr, &blocked_conv_tile<V, F, P + 1, S, FromOut, A>...};
}

// The widest tile of F blocks: no more accumulators than the FMax x PMax tile, and at
// most 14 pixels (with F = 1, AVX-512 ran 56-wide rows at 26 GFLOP/s in 19-pixel tiles
// and 70 in 14-pixel ones).
template <int FMax, int PMax, int F>
constexpr int max_pixels = std::min(FMax* PMax / F, 14);

// Fetches the input the p pixels from x (the tile's column 0) read into L1: each input
// block's window rows, as one run where the windows cover every column between them, else
// each pixel's window, a fetch per 64-byte line. Always inlined: GCC 12 took a function
// of prefetches only for one without effects and dropped its calls.
[[gnu::always_inline]] inline void prefetch_tile_input(const BlockedConvRow& r, const float* x, int64_t p) {
  constexpr uintptr_t kLine = 64;
  const int64_t ci = r.cin_lanes, span = ((r.kw - 1) * r.dw + 1) * ci, step = r.sw * ci;
  const bool one_run = span >= step;
  const int64_t runs = one_run ? 1 : p, floats = one_run ? (p - 1) * step + span : span;
  for (int64_t cb = 0; cb < r.cin_blocks; ++cb)
    for (int64_t ky = 0; ky < r.kh; ++ky)
      for (int64_t i = 0; i < runs; ++i) {
        const float* run = x + cb * r.x_block + ky * r.dh * r.x_row + i * step;
        const uintptr_t end = reinterpret_cast<uintptr_t>(run + floats);
        for (uintptr_t line = reinterpret_cast<uintptr_t>(run) & ~(kLine - 1); line < end; line += kLine)
          __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 3);
      }
}

template <class V, int FMax, int PMax, int F>
void blocked_conv_row_of(const BlockedConvRow& r) {
  constexpr int kMaxP = max_pixels<FMax, PMax, F>;
  constexpr int64_t C = V::size;
  // The row in tiles of near-equal width (a 13-wide row is 5 + 4 + 4, not 6 + 6 + 1): rows wider
  // than the widest tile in tiles that broadcast in registers (4x6 for 4 blocks on AVX-512:
  // Zen 5 0.74-0.91x the 4x7's time on 56- to 8-wide rows), a row that one tile covers in
  // that tile (a 7-wide row in one 4x7 rather than 4 + 3: 1.2-1.3x faster on Zen 5, 1.1x
  // on Zen 4).
  constexpr int kWideP = [] {
    int p = kMaxP;
    while (p > 1 && !broadcast_in_register(V::size, F, p)) --p;
    return broadcast_in_register(V::size, F, p) ? p : kMaxP;
  }();
  const int64_t widest = r.out_w > kMaxP ? kWideP : kMaxP;
  const int64_t n = (r.out_w + widest - 1) / widest, base = r.out_w / n, wider = r.out_w % n;
  // The activation's switch once a row, each kind's tiles their own functions.
  static constexpr Activation kIdentity{};
  with_activation<V>(r.activation ? *r.activation : kIdentity, [&](const auto& activate) {
    using A = std::decay_t<decltype(activate)>;
    constexpr auto pixels = std::make_integer_sequence<int, kMaxP>{};
    static constexpr auto pointwise_tiles = tiles_of<V, F, TileSums::kPointwise, true, A>(pixels);
    static constexpr auto nchw_pointwise_tiles = tiles_of<V, F, TileSums::kNchwPointwise, true, A>(pixels);
    static constexpr auto taps_tiles = tiles_of<V, F, TileSums::kTaps, true, A>(pixels);
    static constexpr auto few_lanes_tiles = tiles_of<V, F, TileSums::kFewLanes, true, A>(pixels);
    static constexpr auto pointwise_init_tiles = tiles_of<V, F, TileSums::kPointwise, false, A>(pixels);
    static constexpr auto nchw_pointwise_init_tiles = tiles_of<V, F, TileSums::kNchwPointwise, false, A>(pixels);
    static constexpr auto taps_init_tiles = tiles_of<V, F, TileSums::kTaps, false, A>(pixels);
    static constexpr auto few_lanes_init_tiles = tiles_of<V, F, TileSums::kFewLanes, false, A>(pixels);
    const bool from_out = !r.init || r.init_adds_out;
    const auto& tiles = r.cin_lanes != C ? (from_out ? few_lanes_tiles : few_lanes_init_tiles)
                        : r.x_lane != 1  ? (from_out ? nchw_pointwise_tiles : nchw_pointwise_init_tiles)
                        : r.w_taps == 1  ? (from_out ? pointwise_tiles : pointwise_init_tiles)
                                         : (from_out ? taps_tiles : taps_init_tiles);
    const int64_t x_pixel = r.x_lane == 1 ? r.sw * r.cin_lanes : 1;  // floats between the pixels' inputs
    int64_t ox = 0;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t p = base + (t < wider ? 1 : 0);
      for (int64_t f = r.prefetch_floats * t / n; f < r.prefetch_floats * (t + 1) / n; f += 16)
        __builtin_prefetch(r.prefetch + f, 0, 2);
      // A tile sums for about a microsecond: long enough to cover a line's trip from
      // another core's cache (450 ns on Zen 5 between CCDs), which the hardware prefetcher
      // did not fetch ahead there. All before the tile: fetched a block at a time within
      // it, the same, but the tile's test per block took ResNet-18's Winograd sums 1.04x
      // the time, fetching or not.
      if (r.prefetch_input && t + 1 < n)
        prefetch_tile_input(r, r.x + (ox + p) * x_pixel, base + (t + 1 < wider ? 1 : 0));
      tiles[p](r, r.x + ox * x_pixel, r.out + ox * C, activate);
      ox += p;
    }
  });
}

template <class V, int FMax, int PMax>
void blocked_conv_row(const BlockedConvRow& r) {
  static_assert(FMax >= 1 && FMax <= 4);
  switch (r.blocks) {
    case 1: return blocked_conv_row_of<V, FMax, PMax, 1>(r);
    case 2:
      if constexpr (FMax >= 2) return blocked_conv_row_of<V, FMax, PMax, 2>(r);
      break;
    case 3:
      if constexpr (FMax >= 3) return blocked_conv_row_of<V, FMax, PMax, 3>(r);
      break;
    case 4:
      if constexpr (FMax >= 4) return blocked_conv_row_of<V, FMax, PMax, 4>(r);
      break;
  }
}

}  // namespace
}  // namespace minfer::kernels
