// The pool kernels, written once over a vector type and instantiated per target by
// pool2d_<isa>.cc, each compiled with its ISA flags. Only those files include this
// header; everything here has internal linkage.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/kernels/pool2d.h"
#include "ops/kernels/simd.h"

namespace minfer::kernels {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// nan_max of ops/op_helpers.h lane by lane: v replaces acc when acc < v or v is NaN, so a
// NaN sticks and ties keep the earlier tap. MAXPS(a, b) is a > b ? a : b, b also when
// either is NaN: MAXPS(v, acc) is nan_max wherever v is not NaN, so only a NaN v needs
// the select (two instructions a tap on AVX-512, three on AVX2, against four).
template <class Arch>
inline xsimd::batch<float, Arch> max_keep_nan(xsimd::batch<float, Arch> acc, xsimd::batch<float, Arch> v) {
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_same_v<Arch, xsimd::avx512f>)
    return _mm512_mask_max_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v, acc);
#endif
#if XSIMD_WITH_AVX2
  if constexpr (std::is_same_v<Arch, xsimd::avx2>)
    return _mm256_blendv_ps(_mm256_max_ps(v, acc), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
#endif
  return xsimd::select((acc < v) || xsimd::isnan(v), v, acc);
}

// MAXPS(v, acc): nan_max where no tap is NaN (ties keep acc, the earlier tap), in one
// instruction; a plane without a NaN is pooled with it.
template <class Arch>
inline xsimd::batch<float, Arch> max_no_nan(xsimd::batch<float, Arch> acc, xsimd::batch<float, Arch> v) {
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_same_v<Arch, xsimd::avx512f>) return _mm512_max_ps(v, acc);
#endif
#if XSIMD_WITH_AVX2
  if constexpr (std::is_same_v<Arch, xsimd::avx2>) return _mm256_max_ps(v, acc);
#endif
  return xsimd::select(acc < v, v, acc);
}

// What the phase-plane path folds a window's taps to: their nan_max (kMaxKeepNan on a
// plane with a NaN, the one-instruction kMax on one without) or their sum.
enum class Fold { kMaxKeepNan, kMax, kSum };

template <Fold F, class V>
inline V fold_step(V acc, V v) {
  if constexpr (F == Fold::kMaxKeepNan)
    return max_keep_nan(acc, v);
  else if constexpr (F == Fold::kMax)
    return max_no_nan(acc, v);
  else
    return acc + v;
}

// Whether a float of the vectors seen is NaN: the largest magnitude's bits past +inf's
// (an integer and and max a vector, no compare).
template <class V>
struct NanWatch {
#if XSIMD_WITH_AVX512F
  __m512i largest = _mm512_setzero_si512();
  void see(V v) {
    largest = _mm512_max_epu32(largest, _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff)));
  }
  bool seen() const {
    return _mm512_cmpgt_epu32_mask(largest, _mm512_set1_epi32(0x7f800000)) != 0;
  }
#else
  __m256i largest = _mm256_setzero_si256();
  void see(V v) {
    largest = _mm256_max_epu32(largest, _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7fffffff)));
  }
  // Magnitudes are below 2^31: a signed compare.
  bool seen() const {
    return _mm256_movemask_epi8(_mm256_cmpgt_epi32(largest, _mm256_set1_epi32(0x7f800000))) != 0;
  }
#endif
};

// Whether any of the n floats at p is NaN.
template <class V>
inline bool has_nan(const float* p, int64_t n) {
  constexpr int64_t W = V::size;
  if (n < W) return std::any_of(p, p + n, [](float v) { return std::isnan(v); });
  NanWatch<V> nan;
  for (int64_t i = 0; i + W <= n; i += W) nan.see(V::load_unaligned(p + i));
  nan.see(V::load_unaligned(p + n - W));
  return nan.seen();
}

// NV vectors of outputs side by side from plane position `at` on, each its own chain of
// taps in window order (a tap's max or add waits for the previous one's: independent
// chains keep the vector units busy), stored at out.
template <class V, int NV, Fold F>
inline void pool_vectors(const float* at, const int64_t* taps, int n_taps, float* out) {
  constexpr int64_t W = V::size;
  V acc[NV];
  // A max takes the first tap as it is (nan_max(-inf, v) is v); a sum starts at +0 as the
  // generic loop's does (+0 + -0 is +0).
  for (int v = 0; v < NV; ++v)
    acc[v] =
        F == Fold::kSum ? V(0.0f) + V::load_unaligned(at + taps[0] + v * W) : V::load_unaligned(at + taps[0] + v * W);
  for (int t = 1; t < n_taps; ++t) {
    const float* src = at + taps[t];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[v] = fold_step<F>(acc[v], V::load_unaligned(src + v * W));
  }
  for (int v = 0; v < NV; ++v) acc[v].store_unaligned(out + v * W);
}

// `count` vectors of outputs, one after the other, from plane position `at` on to out.
template <class V, Fold F>
inline void pool_run(const float* at, int64_t count, const int64_t* taps, int n_taps, float* out) {
  constexpr int64_t W = V::size;
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) pool_vectors<V, 4, F>(at + i * W, taps, n_taps, out + i * W);
  switch (count - i) {
    case 3: pool_vectors<V, 3, F>(at + i * W, taps, n_taps, out + i * W); break;
    case 2: pool_vectors<V, 2, F>(at + i * W, taps, n_taps, out + i * W); break;
    case 1: pool_vectors<V, 1, F>(at + i * W, taps, n_taps, out + i * W); break;
    default: break;
  }
}

// Which lanes of a vector loaded from row[at] lie inside the row's w floats (all: a plain
// load), worked out once for the rows of a plane that share them.
template <class V>
struct Lanes {
  bool all = true;
#if XSIMD_WITH_AVX512F
  __mmask16 inside = 0xffff;
#else
  __m256i inside = _mm256_set1_epi32(-1);
#endif
  Lanes() = default;
  Lanes(int64_t at, int64_t w) {
    constexpr int64_t W = V::size;
    all = at >= 0 && at + W <= w;
    const int64_t lo = std::clamp<int64_t>(-at, 0, W), hi = std::clamp<int64_t>(w - at, lo, W);
#if XSIMD_WITH_AVX512F
    inside = static_cast<__mmask16>((0xffffu >> (W - hi)) & (0xffffu << lo));
#else
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    inside = _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(static_cast<int>(lo) - 1)),
                              _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane));
#endif
  }
};

// The lanes whose bits are set in `bits` (lane i: bit i), any pattern.
template <class V>
inline Lanes<V> lanes_of_bits(uint32_t bits) {
  Lanes<V> l;
  l.all = bits == (uint32_t{1} << V::size) - 1;
#if XSIMD_WITH_AVX512F
  l.inside = static_cast<__mmask16>(bits);
#else
  const __m256i lane_bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  l.inside = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), lane_bit), lane_bit);
#endif
  return l;
}

// row[at + i] in lane i where lanes says it is inside the row, `padding` in the other
// lanes, which are never read: masked loads do not fault there.
template <class V>
inline V load_lanes(const float* row, int64_t at, const Lanes<V>& lanes, float padding = kMinusInf) {
  if (lanes.all) return V::load_unaligned(row + at);
  // The address of lane 0, maybe outside the row: formed as an integer, not by pointer
  // arithmetic past the array.
  const auto lane0 =
      reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(row) + static_cast<uintptr_t>(at) * sizeof(float));
#if XSIMD_WITH_AVX512F
  return _mm512_mask_loadu_ps(_mm512_set1_ps(padding), lanes.inside, lane0);
#else
  return _mm256_blendv_ps(_mm256_set1_ps(padding), _mm256_maskload_ps(lane0, lanes.inside),
                          _mm256_castsi256_ps(lanes.inside));
#endif
}

// Stores the lanes of v that `lanes` holds at row[at + i], nothing elsewhere.
template <class V>
inline void store_lanes(V v, float* row, int64_t at, const Lanes<V>& lanes) {
  if (lanes.all) {
    v.store_unaligned(row + at);
    return;
  }
  const auto lane0 =
      reinterpret_cast<float*>(reinterpret_cast<uintptr_t>(row) + static_cast<uintptr_t>(at) * sizeof(float));
#if XSIMD_WITH_AVX512F
  _mm512_mask_storeu_ps(lane0, lanes.inside, v);
#else
  _mm256_maskstore_ps(lane0, lanes.inside, v);
#endif
}

// The even- (Odd 0) or odd-indexed (Odd 1) floats of the 2 * V::size in a, b.
template <int Odd, class V>
inline V alternate(V a, V b) {
#if XSIMD_WITH_AVX512F
  return alternate_avx512<Odd>(a, b);
#else
  return alternate_avx2<Odd>(a, b);
#endif
}

// How a plane's rows go into the phase planes (the same for every plane): input row iy
// is padded row r = iy + pad_top, phase row r / sh of the phases (r % sh, *); only a
// row's first `used` columns are ever read.
template <class V, int S>
struct PlaneCopy {
  static constexpr int64_t kRowLanes = 8;  // stride 2: the vectors whose load masks are kept
  int64_t used = 0;
  Lanes<V> lanes[2 * kRowLanes];  // the two loads of each of a row's first vectors (all of a short row's)
  PlaneCopy(const PoolShape& s, const Pool2dLayout& l) : used(std::min(s.w, S * l.pitch - s.win.pad_left)) {
    if constexpr (S == 2)
      for (int64_t v = 0; v < kRowLanes; ++v)
        for (int64_t half = 0; half < 2; ++half)
          lanes[2 * v + half] = Lanes<V>(2 * v * V::size - s.win.pad_left + half * V::size, used);
  }
};

// The border of the phase planes: a max's padding is -inf, a sum's 0.
template <Fold F>
constexpr float kBorder = F == Fold::kSum ? 0.0f : kMinusInf;

// Writes plane xp's rows into the phase planes at dst (a row's first column phase's at
// dst + (r % sh) * S * phase_floats) and, for a max, tells whether the plane has a NaN.
// Stride 1 copies the row's columns, the border left as it is. Stride 2 writes each
// phase row whole, border cells kBorder, in whole vectors of a register deinterleave
// (lane by lane copies dominated small planes): the last runs on into the next phase
// row (written after it) or the slack with kBorder only (the loads see the row end at
// `used`), so a padding row it reaches stays border.
template <class V, int S, Fold F>
inline bool copy_plane(const float* xp, const PoolShape& s, const Pool2dLayout& l, const PlaneCopy<V, S>& c,
                       float* dst) {
  constexpr int64_t W = V::size;
  constexpr bool kWatch = F != Fold::kSum;  // a sum keeps a NaN by itself
  const Window2d& win = s.win;
  NanWatch<V> nan;                                                   // stride 2: of the values copied
  int64_t phase = win.pad_top % win.sh, row = win.pad_top / win.sh;  // of padded row iy + pad_top
  for (int64_t iy = 0; iy < s.h && row < l.rows; ++iy) {
    const float* xr = xp + iy * s.w;
    float* d = dst + phase * S * l.phase_floats + row * l.pitch;
    if constexpr (S == 1) {
      copy_floats<V>(xr, c.used, d + win.pad_left);
    } else {
      for (int64_t v = 0, i = 0; i < l.pitch; ++v, i += W) {
        const int64_t at = 2 * i - win.pad_left;
        const bool kept = v < c.kRowLanes;
        const V a = load_lanes<V>(xr, at, kept ? c.lanes[2 * v] : Lanes<V>(at, c.used), kBorder<F>);
        const V b = load_lanes<V>(xr, at + W, kept ? c.lanes[2 * v + 1] : Lanes<V>(at + W, c.used), kBorder<F>);
        if constexpr (kWatch) {
          nan.see(a);
          nan.see(b);
        }
        alternate<0>(a, b).store_unaligned(d + i);
        alternate<1>(a, b).store_unaligned(d + l.phase_floats + i);
      }
    }
    if (++phase == win.sh) phase = 0, ++row;
  }
  // Stride 1 copies in pieces of any length: a pass over the plane instead.
  if constexpr (!kWatch)
    return false;
  else if constexpr (S == 1)
    return has_nan<V>(xp, s.h * s.w);
  else
    return nan.seen();
}

// One plane from its phase planes to yp (out: the whole-plane layout's outputs).
template <class V, Fold F>
void pool_plane(const PoolShape& s, const Pool2dLayout& l, const float* phases, const int64_t* taps, int n_taps,
                float* out, float* yp) {
  constexpr int64_t W = V::size;
  if (l.whole_plane) {
    pool_run<V, F>(phases, l.out_floats / W, taps, n_taps, out);
    for (int64_t oy = 0; oy < s.out_h; ++oy) copy_floats<V>(out + oy * l.pitch, s.out_w, yp + oy * s.out_w);
    return;
  }
  // Along each row (out_w >= W): whole vectors, the last one ending at out_w (its
  // columns already stored get the same values again).
  const int64_t full = s.out_w / W;
  for (int64_t oy = 0; oy < s.out_h; ++oy) {
    const float* at = phases + oy * l.pitch;
    float* yr = yp + oy * s.out_w;
    pool_run<V, F>(at, full, taps, n_taps, yr);
    if (full * W < s.out_w) pool_vectors<V, 1, F>(at + s.out_w - W, taps, n_taps, yr + s.out_w - W);
  }
}

#if XSIMD_WITH_AVX512F
// [a1 .. a15, b0]: a shifted down one lane, b's first lane after it.
inline xsimd::batch<float, xsimd::avx512f> shift_in(xsimd::batch<float, xsimd::avx512f> a,
                                                    xsimd::batch<float, xsimd::avx512f> b) {
  return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(b), _mm512_castps_si512(a), 1));
}
#endif

// 3x3 windows at stride S (1 or 2) in both directions, dilation 1, the plane read where
// it lies: each input row's maxima over column triples (S ox + 0, 1, 2, less the padding;
// at stride 2 a register deinterleave), in a ring of three rows, then each output row the
// maximum of its window rows' maxima. Row maxima first, then rows in order: the first of
// equal values in window order wins, as in nan_max (signed zeros included); with the
// one-instruction max, so a plane with a NaN returns false, its output unwritten, for the
// phase-plane path. `lanes` holds each output vector's three loads' masks.
template <class V, int S>
bool pool_plane_rows_first(const float* xp, const PoolShape& s, const Lanes<V>* lanes, float* ring, float* yp) {
  constexpr int64_t W = V::size;
  const int64_t vectors = (s.out_w + W - 1) / W, pitch = vectors * W;
  NanWatch<V> nan;
  // Input row r's maxima are ring row r % 3, its pointer taken once per row: a remainder
  // per vector load (a multiply and shifts) and a third load per vector at stride 2 took
  // SqueezeNet's stem pool 1.33x this time (Zen 5, its 64 planes in L2).
  float* rows[3] = {ring, ring + pitch, ring + 2 * pitch};
  int64_t next_row = 0;  // the first input row whose maxima are not in the ring yet
  for (int64_t oy = 0; oy < s.out_h; ++oy) {
    const int64_t top = oy * S - s.win.pad_top, first = std::max<int64_t>(top, 0);
    const int64_t last = std::min<int64_t>(top + 2, s.h - 1);
    for (; next_row <= last; ++next_row) {
      const float* xr = xp + next_row * s.w;
      float* h = rows[next_row % 3];
      if constexpr (S == 2) {
        // Three vectors from the first column on, deinterleaved; the third is the next
        // vector's first (the same columns and lanes): loaded and watched once.
        V a = load_lanes<V>(xr, -s.win.pad_left, lanes[0]);
        nan.see(a);
        for (int64_t j = 0; j < vectors; ++j) {
          const int64_t at = 2 * j * W - s.win.pad_left;
          const V b = load_lanes<V>(xr, at + W, lanes[3 * j + 1]), c = load_lanes<V>(xr, at + 2 * W, lanes[3 * j + 2]);
          nan.see(b);
          nan.see(c);
          const V even = alternate<0>(a, b);
          max_no_nan(max_no_nan(even, alternate<1>(a, b)), shift_in(even, c)).store_unaligned(h + j * W);
          a = c;
        }
      } else {
        // The three columns' vectors.
        for (int64_t j = 0; j < vectors; ++j) {
          const int64_t at = j * W - s.win.pad_left;
          const V a = load_lanes<V>(xr, at, lanes[3 * j]), b = load_lanes<V>(xr, at + 1, lanes[3 * j + 1]);
          const V c = load_lanes<V>(xr, at + 2, lanes[3 * j + 2]);
          nan.see(a);
          nan.see(b);
          nan.see(c);
          max_no_nan(max_no_nan(a, b), c).store_unaligned(h + j * W);
        }
      }
    }
    // Whole vectors, the last one ending at out_w (out_w >= W: its columns already stored
    // get the same values again).
    float* yr = yp + oy * s.out_w;
    const int64_t window_rows = last - first + 1;
    const float* r0 = rows[first % 3];
    const float* r1 = rows[(first + 1) % 3];
    const float* r2 = rows[(first + 2) % 3];
    for (int64_t j = 0; j < vectors; ++j) {
      const int64_t at = std::min(j * W, s.out_w - W);
      V m(kMinusInf);
      if (window_rows > 0) m = V::load_unaligned(r0 + at);
      if (window_rows > 1) m = max_no_nan(m, V::load_unaligned(r1 + at));
      if (window_rows > 2) m = max_no_nan(m, V::load_unaligned(r2 + at));
      m.store_unaligned(yr + at);
    }
  }
  return !nan.seen();
}

// The flat path (Pool2dLayout::flat): dilation 1, stride S (1 or 2) both ways, and
// w == S * out_w. A plane is one run of h * w floats, and its row maxima one run of h *
// out_w: position j of them (row j / out_w, column j % out_w) is the maximum over the
// window's columns of x[S j - pad_left + kj] in order, the vectors running across rows
// (at stride 2 two loads deinterleaved per tap), the lanes whose column falls outside
// the row masked to -inf. Then each output is the maximum over the window's rows of
// those: at stride 1 along the whole run too (hm[i + (ki - pad_top) * w], rows outside
// the plane masked), at stride 2 row by row. Row maxima first, then rows in order: the
// first of equal values in window order wins, as in nan_max; with the one-instruction
// max, so a plane with a NaN is pooled again through the phase planes. The masks depend
// only on the vector's place in the plane: worked out once per call.
template <class V, int S>
struct FlatMasks {
  int64_t vectors_in = 0;         // of the row maxima
  std::vector<Lanes<V>> columns;  // [vector of the row maxima][kj]: the lanes whose tap is in the row
  std::vector<Lanes<V>> loads;    // stride 2: [vector][kj][2]: the lanes of the tap's two loads in the plane
  // Stride 1: the output run's vectors, each tap row's lanes in the plane, the last
  // vector's lanes in the run.
  int64_t vectors_out = 0;
  std::vector<Lanes<V>> rows;  // [vector of the output run][ki]
  Lanes<V> last_out;
  Lanes<V> row_end;  // stride 2: an output row's last vector's lanes in the row
  explicit FlatMasks(const PoolShape& s) {
    constexpr int64_t W = V::size;
    const Window2d& win = s.win;
    const int64_t maxima = s.h * s.out_w, in = s.h * s.w, out = s.out_h * s.out_w;
    vectors_in = (maxima + W - 1) / W;
    const auto mask = [&](int64_t v, int64_t n, auto inside) {
      uint32_t bits = 0;
      for (int64_t lane = 0; lane < W; ++lane)
        if (v * W + lane < n && inside(v * W + lane)) bits |= uint32_t{1} << lane;
      return lanes_of_bits<V>(bits);
    };
    for (int64_t v = 0; v < vectors_in; ++v)
      for (int64_t kj = 0; kj < win.kw; ++kj) {
        columns.push_back(mask(v, maxima, [&](int64_t j) {
          const int64_t column = S * (j % s.out_w) - win.pad_left + kj;
          return column >= 0 && column < s.w;
        }));
        if constexpr (S == 2) {
          const int64_t at = S * v * W - win.pad_left + kj;
          loads.push_back(Lanes<V>(at, in));
          loads.push_back(Lanes<V>(at + W, in));
        }
      }
    if constexpr (S == 1) {
      vectors_out = (out + W - 1) / W;
      last_out = Lanes<V>((vectors_out - 1) * W, out);
      for (int64_t v = 0; v < vectors_out; ++v)
        for (int64_t ki = 0; ki < win.kh; ++ki)
          rows.push_back(mask(v, out, [&](int64_t i) {
            const int64_t row = i / s.w - win.pad_top + ki;
            return row >= 0 && row < s.h;
          }));
    } else {
      row_end = Lanes<V>((s.out_w - 1) / W * W, s.out_w);
    }
  }
};

// v where lanes holds, -inf elsewhere.
template <class V>
inline V keep_lanes(V v, const Lanes<V>& lanes) {
  if (lanes.all) return v;
#if XSIMD_WITH_AVX512F
  return _mm512_mask_blend_ps(lanes.inside, _mm512_set1_ps(kMinusInf), v);
#else
  return _mm256_blendv_ps(_mm256_set1_ps(kMinusInf), v, _mm256_castsi256_ps(lanes.inside));
#endif
}

// hm = the row maxima of plane xp (FlatMasks::vectors_in vectors); false if it has a NaN.
// KW: the window's width when known at compile time (the taps' loop unrolled), else 0.
template <class V, int S, int KW>
inline bool flat_row_maxima(const float* xp, const PoolShape& s, const FlatMasks<V, S>& m, float* hm) {
  constexpr int64_t W = V::size;
  const int64_t kw = KW ? KW : s.win.kw;
  NanWatch<V> nan;
  for (int64_t v = 0; v < m.vectors_in; ++v) {
    const int64_t at = S * v * W - s.win.pad_left;
    const auto tap = [&](int64_t kj) {
      const int64_t t = v * kw + kj;
      if constexpr (S == 1) {
        // Every float of the plane is in the middle tap's lanes (kj == pad_left) once:
        // only those are watched for a NaN.
        const V x = load_lanes<V>(xp, at + kj, m.columns[t]);
        if (kj == s.win.pad_left) nan.see(x);
        return x;
      } else {
        const V a = load_lanes<V>(xp, at + kj, m.loads[2 * t]), b = load_lanes<V>(xp, at + kj + W, m.loads[2 * t + 1]);
        nan.see(a);
        nan.see(b);
        return keep_lanes<V>(alternate<0>(a, b), m.columns[t]);
      }
    };
    V acc = tap(0);
#pragma GCC unroll 16
    for (int64_t kj = 1; kj < kw; ++kj) acc = max_no_nan(acc, tap(kj));
    acc.store_unaligned(hm + v * W);
  }
  return !nan.seen();
}

// yp = the maxima over the window's rows of the row maxima hm (KH as KW above).
template <class V, int S, int KH>
inline void flat_column_maxima(const float* hm, const PoolShape& s, const FlatMasks<V, S>& m, float* yp) {
  constexpr int64_t W = V::size;
  const int64_t kh = KH ? KH : s.win.kh;
  if constexpr (S == 1) {
    // Along the output run, the last vector stored in part.
    for (int64_t v = 0; v < m.vectors_out; ++v) {
      const Lanes<V>* lanes = &m.rows[v * kh];
      const int64_t at = v * W - s.win.pad_top * s.w;
      V acc = load_lanes<V>(hm, at, lanes[0]);
#pragma GCC unroll 16
      for (int64_t ki = 1; ki < kh; ++ki) acc = max_no_nan(acc, load_lanes<V>(hm, at + ki * s.w, lanes[ki]));
      if (v + 1 < m.vectors_out)
        acc.store_unaligned(yp + v * W);
      else
        store_lanes<V>(acc, yp, v * W, m.last_out);
    }
  } else {
    // Row by row; a row's vectors read on past it into hm's slack, those lanes not stored.
    // A window all in the padding (pad_top or pad_bottom as tall as the window) is -inf.
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      const int64_t top = oy * s.win.sh - s.win.pad_top, first = std::max<int64_t>(top, 0);
      const int64_t last = std::min(top + kh - 1, s.h - 1);
      float* yr = yp + oy * s.out_w;
      for (int64_t at = 0; at < s.out_w; at += W) {
        V acc(kMinusInf);
        if (first <= last) acc = V::load_unaligned(hm + first * s.out_w + at);
        for (int64_t r = first + 1; r <= last; ++r) acc = max_no_nan(acc, V::load_unaligned(hm + r * s.out_w + at));
        if (at + W <= s.out_w)
          acc.store_unaligned(yr + at);
        else
          store_lanes<V>(acc, yr, at, m.row_end);
      }
    }
  }
}

// The window taps [begin, end) of k taps d apart from `start` that land in [0, limit).
inline std::pair<int64_t, int64_t> taps_within(int64_t start, int64_t k, int64_t d, int64_t limit) {
  const int64_t begin = start >= 0 ? 0 : (-start + d - 1) / d;
  const int64_t end = start >= limit ? 0 : std::min(k, (limit - start + d - 1) / d);
  return {begin, std::max(begin, end)};
}

// An average's divisor along one axis at output position o (its window from o * stride -
// pad on): the taps inside the input, or with count_include_pad inside the padded input
// (explicit padding, not ceil_mode's overhang past it), as ONNX and PyTorch count them.
inline float counted_taps(int64_t o, int64_t k, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
                          int64_t size, bool count_include_pad) {
  const auto [t0, t1] = count_include_pad ? taps_within(o * stride, k, dilation, pad_begin + size + pad_end)
                                          : taps_within(o * stride - pad_begin, k, dilation, size);
  return static_cast<float>(t1 - t0);
}

// An NCHW average pool's divisors: each output row's window rows that count and each
// output column's columns; an output is divided by their float product (small integers:
// exact), as ops/pool.cc's generic loop divides.
struct AverageDivisors {
  std::vector<float> rows, columns;
  AverageDivisors(const PoolShape& s, bool count_include_pad) {
    const Window2d& w = s.win;
    for (int64_t oy = 0; oy < s.out_h; ++oy)
      rows.push_back(counted_taps(oy, w.kh, w.sh, w.dh, w.pad_top, w.pad_bottom, s.h, count_include_pad));
    for (int64_t ox = 0; ox < s.out_w; ++ox)
      columns.push_back(counted_taps(ox, w.kw, w.sw, w.dw, w.pad_left, w.pad_right, s.w, count_include_pad));
  }
};

// Divides plane yp's window sums by their divisors.
template <class V>
inline void divide_plane(const PoolShape& s, const AverageDivisors& d, float* yp) {
  constexpr int64_t W = V::size;
  for (int64_t oy = 0; oy < s.out_h; ++oy) {
    float* yr = yp + oy * s.out_w;
    const float rows = d.rows[oy];
    int64_t ox = 0;
    for (; ox + W <= s.out_w; ox += W)
      (V::load_unaligned(yr + ox) / (V(rows) * V::load_unaligned(d.columns.data() + ox))).store_unaligned(yr + ox);
    for (; ox < s.out_w; ++ox) yr[ox] /= rows * d.columns[ox];
  }
}

// Sum: the average pool's sums divided by `divisors`; else the max pool.
template <class V, int S, bool Sum>
void pool_planes_phased(const PoolShape& s, const Pool2dLayout& l, const float* x, float* y, int64_t begin, int64_t end,
                        float* scratch, const AverageDivisors* divisors = nullptr);

// Planes [begin, end) through the flat path, two row-maxima buffers (and a vector of
// slack) in turn: plane p + 1's are written before plane p's are read, so the reads (at
// row offsets, across two stored vectors) do not wait for stores still in flight. K: the
// window's size when square and known at compile time, else 0.
template <class V, int S, int K>
void max_pool_planes_flat(const PoolShape& s, const Pool2dLayout& l, const float* x, float* y, int64_t begin,
                          int64_t end, float* scratch) {
  const FlatMasks<V, S> m(s);
  const int64_t in = s.h * s.w, out = s.out_h * s.out_w, buffer = (m.vectors_in + 1) * V::size;
  bool next_clean = begin < end && flat_row_maxima<V, S, K>(x + begin * in, s, m, scratch);
  for (int64_t p = begin; p < end; ++p) {
    const float* hm = scratch + (p - begin) % 2 * buffer;
    const bool clean = next_clean;
    if (p + 1 < end)
      next_clean = flat_row_maxima<V, S, K>(x + (p + 1) * in, s, m, scratch + (p + 1 - begin) % 2 * buffer);
    if (clean)
      flat_column_maxima<V, S, K>(hm, s, m, y + p * out);
    else
      pool_planes_phased<V, S, false>(s, l, x, y, p, p + 1, scratch + 2 * buffer);
  }
}

template <class V, int S>
void max_pool_planes(const PoolShape& s, const Pool2dLayout& l, const float* x, float* y, int64_t begin, int64_t end,
                     float* scratch) {
  const Window2d& win = s.win;
  constexpr int64_t W = V::size;
  if (l.flat) {
    // The windows of GoogLeNet's and most CNNs' pools, their taps unrolled: with the NaN
    // watch on one tap, GoogLeNet's stride-1 pools took 0.88x (AVX-512) and 0.81-0.87x
    // (AVX2) the time of loops over a runtime size (op_bench, Zen 4; stride 2 unchanged).
    if (win.kh == 3 && win.kw == 3)
      max_pool_planes_flat<V, S, 3>(s, l, x, y, begin, end, scratch);
    else if (win.kh == 2 && win.kw == 2)
      max_pool_planes_flat<V, S, 2>(s, l, x, y, begin, end, scratch);
    else
      max_pool_planes_flat<V, S, 0>(s, l, x, y, begin, end, scratch);
    return;
  }
  // 3x3 windows at stride S on rows of at least a vector, AVX-512: rows first, no copy.
  // Not on AVX2, where it measured 0.7-1.4x the phase planes (op_bench, Zen 4): its
  // masked loads at the row ends are a load and a blend.
  if constexpr (W == 16)
    if (win.kh == 3 && win.kw == 3 && win.sh == S && win.dh == 1 && s.out_w >= W) {
      const int64_t vectors = (s.out_w + W - 1) / W, step = S == 2 ? W : 1;
      std::vector<Lanes<V>> lanes(static_cast<size_t>(3 * vectors));
      for (int64_t j = 0; j < vectors; ++j)
        for (int64_t i = 0; i < 3; ++i) lanes[3 * j + i] = Lanes<V>(S * j * W - win.pad_left + i * step, s.w);
      for (int64_t p = begin; p < end; ++p) {
        const float* xp = x + p * s.h * s.w;
        float* yp = y + p * s.out_h * s.out_w;
        if (pool_plane_rows_first<V, S>(xp, s, lanes.data(), scratch, yp)) continue;
        pool_planes_phased<V, S, false>(s, l, x, y, p, p + 1, scratch);
      }
      return;
    }
  pool_planes_phased<V, S, false>(s, l, x, y, begin, end, scratch);
}

// The average pool through the phase planes alone: the flat and rows-first paths fold
// rows first, which for a sum would change its bits.
template <class V, int S>
void average_pool_planes(const PoolShape& s, const Pool2dLayout& l, bool count_include_pad, const float* x, float* y,
                         int64_t begin, int64_t end, float* scratch) {
  const AverageDivisors divisors(s, count_include_pad);
  pool_planes_phased<V, S, true>(s, l, x, y, begin, end, scratch, &divisors);
}

template <class V, int S, bool Sum>
void pool_planes_phased(const PoolShape& s, const Pool2dLayout& l, const float* x, float* y, int64_t begin, int64_t end,
                        float* scratch, const AverageDivisors* divisors) {
  constexpr Fold kCopy = Sum ? Fold::kSum : Fold::kMax;
  const Window2d& win = s.win;
  // Where each window tap reads, from an output's position in the phase planes.
  int64_t taps[kPool2dMaxWindow * kPool2dMaxWindow];
  int n_taps = 0;
  for (int64_t ki = 0; ki < win.kh; ++ki)
    for (int64_t kj = 0; kj < win.kw; ++kj) {
      const int64_t phase = (ki * win.dh % win.sh) * S + kj % S;
      taps[n_taps++] = phase * l.phase_floats + ki * win.dh / win.sh * l.pitch + kj / S;
    }
  // Two copies of the phase planes: plane p + 1 is copied in before plane p is pooled from
  // the other, so the pool's loads never wait for the stores that wrote them (a load
  // spanning two stores still in flight is not forwarded from them).
  const int64_t planes_floats = l.phases * l.phase_floats;
  // The border: every copy writes the same interior.
  std::fill(scratch, scratch + 2 * planes_floats, kBorder<kCopy>);
  float* out = scratch + 2 * planes_floats;
  const PlaneCopy<V, S> copy(s, l);
  // Whether plane p + 1 has a NaN: a plane without is pooled with the one-instruction max.
  bool next_has_nan = begin < end && copy_plane<V, S, kCopy>(x + begin * s.h * s.w, s, l, copy, scratch);
  for (int64_t p = begin; p < end; ++p) {
    const float* phases = scratch + (p - begin) % 2 * planes_floats;
    const bool has_nan = next_has_nan;
    if (p + 1 < end)
      next_has_nan =
          copy_plane<V, S, kCopy>(x + (p + 1) * s.h * s.w, s, l, copy, scratch + (p + 1 - begin) % 2 * planes_floats);
    float* yp = y + p * s.out_h * s.out_w;
    if constexpr (Sum) {
      pool_plane<V, Fold::kSum>(s, l, phases, taps, n_taps, out, yp);
      divide_plane<V>(s, *divisors, yp);
    } else if (has_nan) {
      pool_plane<V, Fold::kMaxKeepNan>(s, l, phases, taps, n_taps, out, yp);
    } else {
      pool_plane<V, Fold::kMax>(s, l, phases, taps, n_taps, out, yp);
    }
  }
}

// N output pixels of an NCHWc row side by side, `apart` floats from one to the next, from
// `first` (the first one's first tap inside the input) on: each its own chain of taps in
// window order (rows, then columns), so the N chains overlap where one alone waits for
// each max or add; acc holds their starting values. KW > 0: columns == KW, column_floats
// and apart are C and SW * C, known here: the taps are unrolled and outputs whose windows
// overlap share their loads.
template <class V, int N, int KW, int SW, class Step>
inline void nchwc_windows(const float* first, int64_t rows, int64_t row_floats, int64_t columns, int64_t column_floats,
                          int64_t apart, Step step, V* acc) {
  if constexpr (KW > 0) {
    columns = KW;
    column_floats = V::size;
    apart = SW * V::size;
  }
  for (int64_t ki = 0; ki < rows; ++ki)
#pragma GCC unroll 8
    for (int64_t kj = 0; kj < columns; ++kj) {
      const float* tap = first + ki * row_floats + kj * column_floats;
#pragma GCC unroll 4
      for (int v = 0; v < N; ++v) acc[v] = step(acc[v], V::load_unaligned(tap + v * apart));
    }
}

// Output rows [begin, end) of an NCHWc pool (out_h rows a plane, one plane after the
// other): acc starts at `start`, takes each tap inside the input through step, and
// finish_row(oy)(acc, ox, inside) gives the output. The columns whose window lies inside
// go four at a time; KW, SW as in nchwc_windows.
template <int KW, int SW, class V, class Step, class FinishRow>
void pool_nchwc_rows(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end, V start, Step step,
                     FinishRow finish_row) {
  constexpr int64_t C = V::size;
  constexpr int kOutputs = 4;
  const Window2d& w = s.win;
  // The columns whose window lies inside the row: ox * sw - pad_left >= 0 and
  // ox * sw - pad_left + (kw - 1) * dw < s.w.
  const int64_t inside_begin = std::min(s.out_w, (w.pad_left + w.sw - 1) / w.sw);
  const int64_t last_start = s.w - 1 - (w.kw - 1) * w.dw + w.pad_left;
  const int64_t inside_end = last_start < 0 ? inside_begin : std::clamp(last_start / w.sw + 1, inside_begin, s.out_w);
  const int64_t row_floats = w.dh * s.w * C, column_floats = w.dw * C, apart = w.sw * C;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t oy = row % s.out_h, iy0 = oy * w.sh - w.pad_top;
    // Not a structured binding: the lambda below reads them (clang 14 refuses that).
    const std::pair<int64_t, int64_t> inside_rows = taps_within(iy0, w.kh, w.dh, s.h);
    const int64_t ki0 = inside_rows.first, ki1 = inside_rows.second;
    const float* xr = x + (row / s.out_h * s.h + iy0 + ki0 * w.dh) * s.w * C;  // the first row inside
    float* yr = y + row * s.out_w * C;
    const auto finish = finish_row(oy);
    const auto one = [&](int64_t ox, bool inside) {
      const int64_t ix0 = ox * w.sw - w.pad_left;
      const auto [kj0, kj1] = inside ? std::pair<int64_t, int64_t>{0, w.kw} : taps_within(ix0, w.kw, w.dw, s.w);
      V acc = start;
      nchwc_windows<V, 1, 0, 0>(xr + (ix0 + kj0 * w.dw) * C, ki1 - ki0, row_floats, kj1 - kj0, column_floats, apart,
                                step, &acc);
      finish(acc, ox, inside).store_unaligned(yr + ox * C);
    };
    int64_t ox = 0;
    for (; ox < inside_begin; ++ox) one(ox, false);
    for (; ox + kOutputs <= inside_end; ox += kOutputs) {
      V acc[kOutputs];
      for (V& a : acc) a = start;
      const float* first = xr + (ox * w.sw - w.pad_left) * C;
      nchwc_windows<V, kOutputs, KW, SW>(first, ki1 - ki0, row_floats, w.kw, column_floats, apart, step, acc);
      for (int v = 0; v < kOutputs; ++v) finish(acc[v], ox + v, true).store_unaligned(yr + (ox + v) * C);
    }
    for (; ox < inside_end; ++ox) one(ox, true);
    for (; ox < s.out_w; ++ox) one(ox, false);
  }
}

// pool_nchwc_rows with the taps unrolled for windows 3 columns wide at stride 1 or 2
// (nearly every CNN's pools), each its own function (sharing one, the other windows' loop
// ran 1.2x slower).
template <class V, class Step, class FinishRow>
void pool_nchwc_rows_any(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end, V start, Step step,
                         FinishRow finish_row) {
  const Window2d& w = s.win;
  if (w.kw == 3 && w.dw == 1 && w.sw == 1)
    pool_nchwc_rows<3, 1>(s, x, y, begin, end, start, step, finish_row);
  else if (w.kw == 3 && w.dw == 1 && w.sw == 2)
    pool_nchwc_rows<3, 2>(s, x, y, begin, end, start, step, finish_row);
  else
    pool_nchwc_rows<0, 0>(s, x, y, begin, end, start, step, finish_row);
}

template <class V>
void max_pool_nchwc_rows(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end) {
  pool_nchwc_rows_any(
      s, x, y, begin, end, V(kMinusInf), [](V acc, V v) { return max_keep_nan(acc, v); },
      [](int64_t) { return [](V acc, int64_t, bool) { return acc; }; });
}

// The average pool's: each output pixel the sum of its window's vectors inside the input
// in window order (rows, then columns), divided by the taps that count (inside the input,
// or with count_include_pad inside the padded input, not ceil_mode's overhang past it):
// ops/pool.cc's generic loop, the same bits.
template <class V>
void average_pool_nchwc_rows(const PoolShape& s, bool count_include_pad, const float* x, float* y, int64_t begin,
                             int64_t end) {
  const Window2d& w = s.win;
  pool_nchwc_rows_any(
      s, x, y, begin, end, V(0.0f), [](V acc, V v) { return acc + v; },
      [&](int64_t oy) {
        const float rows = counted_taps(oy, w.kh, w.sh, w.dh, w.pad_top, w.pad_bottom, s.h, count_include_pad);
        return [&, rows](V acc, int64_t ox, bool inside) {
          const float columns =
              inside ? static_cast<float>(w.kw)
                     : counted_taps(ox, w.kw, w.sw, w.dw, w.pad_left, w.pad_right, s.w, count_include_pad);
          return acc / V(rows * columns);
        };
      });
}

template <class V>
constexpr Pool2dKernel pool2d_kernel(Isa isa, int stride) {
  return {isa,
          static_cast<int>(V::size),
          stride,
          stride == 1 ? &max_pool_planes<V, 1> : &max_pool_planes<V, 2>,
          stride == 1 ? &average_pool_planes<V, 1> : &average_pool_planes<V, 2>,
          &max_pool_nchwc_rows<V>,
          &average_pool_nchwc_rows<V>};
}

}  // namespace
}  // namespace minfer::kernels
