// The contract between the GEMM driver (blocking, packing, threads) and the per-target
// micro-kernels, each compiled in its own translation unit with its ISA flags.
#pragma once

#include <cstdint>

#include "ops/activation.h"
#include "profiler/isa.h"

namespace minfer::kernels {

// Writes op(B)[k0, k0 + kb) x [j0, j0 + cols) at dst as ceil(cols / nr) panels of nr
// columns per k, zero-padded past column j0 + cols. Plain matrices have one; a
// convolution can pass its own that reads the image directly (im2col fused into packing).
struct BPanelPacker {
  void (*pack)(const void* source, int64_t k0, int64_t kb, int64_t j0, int64_t cols, int nr, float* dst) = nullptr;
  const void* source = nullptr;
};

// One call of a macro-kernel: an [m, n] block of C for one k-block, from packed panels.
// A's panels hold MR rows per k (panel of row i at a + i * k), B's hold NR columns per k
// (panel of column j at b + j * k), zero-padded past the matrix edge.
struct GemmBlock {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  const float* b = nullptr;
  // When set, the macro-kernel packs each B panel into b_buffer (== b) just before its
  // tiles use it, so the panel is still in L1: columns b_j0 + j of k-block b_k0.
  const BPanelPacker* pack_b = nullptr;
  float* b_buffer = nullptr;
  int64_t b_k0 = 0, b_j0 = 0;
  // op(B)[b_k0, b_j0] when B is a plain matrix (row stride b_ld), for prefetching.
  const float* b_source = nullptr;
  int64_t b_ld = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  // C is stored transposed: element (i, j) of the block at c[j * ldc + i].
  bool c_trans = false;
  float alpha = 1.0f;
  float beta = 0.0f;  // 0: C is overwritten, not read
  // The epilogue, on the last k-block only: row_bias[i] or col_bias[j] (already offset to
  // the block), then the activation.
  bool last = false;
  const float* row_bias = nullptr;
  const float* col_bias = nullptr;
  const float* addend = nullptr;  // at the block's element (0, 0), laid out as C
  const Activation* activation = nullptr;
};

struct GemmKernel {
  const char* name;  // gemm_f32_<MR>x<NR>_<isa>
  Isa isa;
  int mr, nr;          // register tile
  int64_t mc, kc, nc;  // cache blocking: A block [mc, kc] in L2, B panel [kc, nr] in L1
  void (*run_block)(const GemmBlock&);
};

// The K blocking, a function of K and kc only (never of the thread count), so
// every element of C sums its products in the same order however the work is split.
struct KBlocks {
  KBlocks(int64_t k, int64_t kc)
      : count(k == 0 ? 0 : (k + kc - 1) / kc), size(count == 0 ? 0 : (k + count - 1) / count), k(k) {}
  int64_t begin(int64_t i) const { return i * size; }
  int64_t length(int64_t i) const { return (i + 1 == count) ? k - i * size : size; }
  int64_t count, size, k;
};

// Packs the B panel at block column j if the block asks for it (see GemmBlock::pack_b).
// Static: each target's translation unit keeps its own copy (no cross-ISA merging).
static inline void pack_b_panel(const GemmBlock& blk, int64_t j, int nr, int panel_width) {
  if (blk.pack_b)
    blk.pack_b->pack(blk.pack_b->source, blk.b_k0, blk.k, blk.b_j0 + j, nr, panel_width, blk.b_buffer + j * blk.k);
}

// The scalar epilogue for a tile computed into `acc` [rows, nr] (row stride acc_ld): used
// by the edge tiles and the transposed stores of the SIMD kernels and by the scalar kernel. Out of line, in
// portable code, so no ISA-specific copy of it exists.
void finish_tile_scalar(const GemmBlock& blk, const float* acc, int64_t acc_ld, int64_t i, int64_t j, int rows, int nr);

// The largest register tile of any kernel, in floats (12 x 32 on AVX-512).
constexpr int kMaxTileFloats = 12 * 32;

// One per target, each defined in its own translation unit. Constant-initialised, so
// naming one runs no code of its ISA.
extern const GemmKernel gemm_f32_4x8_scalar;
extern const GemmKernel gemm_f32_6x16_avx2;
extern const GemmKernel gemm_f32_12x32_avx512;

}  // namespace minfer::kernels
