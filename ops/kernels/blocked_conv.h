// Direct convolution in the blocked layout NCHWc (c = the vector's lanes: 16 on AVX-512,
// 8 on AVX2), for the regular and grouped convolutions where it is faster than im2col +
// GEMM (the shapes are chosen by measurement, see docs/performance.md). The weights are
// packed once, [output blocks][input blocks of the group][kh][kw][c in][c out]; each call
// reorders the NCHW input into a zero-bordered NCHWc copy in the workspace or, where the
// team splits rows, each thread its rows into its kept scratch (so the
// micro-kernel has no bounds checks; an input of fewer than c channels is one block of
// just those, with no zero lanes to multiply), and computes the output by items of F
// output blocks x a band of output rows, summed in NCHWc in a thread's scratch then
// reordered into the NCHW output with the activation. The micro-kernel holds F output blocks x
// P output pixels of one output row in registers (F weight vectors, P broadcast inputs,
// F*P multiply-adds per input channel); any stride and dilation. The input channels are
// summed in chunks whose weights stay in L2, the partial sums kept in the NCHWc output.
// 3x3 stride-1 layers may run by Winograd F(2x2, 3x3) instead (BlockedAlgorithm): the
// same input copy and output epilogues, the 16 products per tile summed by the same
// micro-kernel as 1x1 convolutions over the transformed tiles (winograd_impl.h).
//
//   if (kernels::blocked_conv_applies(shape, isa)) {
//     kernels::BlockedConv conv(shape, weights, isa);
//     workspace: conv.workspace_floats(batch, threads) floats;
//     own: threads x conv.thread_floats(batch, threads)
//     conv.run(batch, x, bias, activation, y, workspace, own, threads);
//   }
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "graph/aligned_buffer.h"
#include "ops/activation.h"
#include "ops/kernels/tensor_layouts.h"
#include "ops/kernels/workspace.h"
#include "ops/window.h"
#include "profiler/isa.h"

namespace minfer::kernels {

class WorkShares;

// The work of one call of a kernel's row function: `blocks` (<= max_blocks) output
// blocks of one output row, summed over `cin_blocks` input blocks.
struct BlockedConvRow {
  const float* x;              // input at the first summed block, the row's top window row, column 0
  int64_t cin_lanes;           // input channels per input block (the c of the input's layout)
  int64_t x_block;             // floats between input blocks
  int64_t x_lane = 1;          // floats between a block's lanes: 1, or the plane of an NCHW x (1x1, stride 1)
  int64_t x_row;               // floats between padded input rows
  int64_t cin_blocks;          // input blocks summed
  const float* w;              // packed weights of the first output block at the first summed input block
  int64_t w_block;             // floats between output blocks' weights
  const float* init;           // blocks * c initial sums (the bias), or null: add to what `out` holds
  bool init_adds_out = false;  // with init: start from what `out` holds plus init (a residual there)
  // Applied on the registers before the store (the last chunk of input blocks), or null.
  // Only kinds activation_in_registers() takes.
  const Activation* activation = nullptr;
  float* out;         // NCHWc output of the first block at the row's first column
  int64_t out_block;  // floats between output blocks
  // The window's kh rows of kw taps from x and w: part of the packed window, whose
  // every input block holds w_taps taps, rows of w_kw.
  int64_t out_w, sw, kh, kw, dh, dw, w_taps, w_kw;
  int blocks;
  // Floats to fetch toward L2 over the row's tiles (the next tile of output blocks'
  // weights), or none.
  const float* prefetch = nullptr;
  int64_t prefetch_floats = 0;
  // Whether each tile fetches the next one's input into L1 first: where another thread
  // may have written it, in a cache the hardware prefetcher does not stream from. Only
  // on NCHWc inputs (x_lane 1).
  bool prefetch_input = false;
};

// Winograd F(2x2, 3x3)'s input transform: the 4x4 windows (2 pixels apart) of `tiles`
// output tiles in row-major order, from column `first` of the first tile row (a band of
// tiles need not hold whole rows), of `blocks` input blocks into v, [16][blocks][tiles][c],
// each window's 16 transformed vectors 16 planes apart.
struct WinogradInput {
  const float* x;   // zero-bordered NCHWc input of the first block at the first tile row's top
  int64_t x_block;  // floats between input blocks
  int64_t x_row;    // floats between input rows
  int64_t blocks, first, tiles, tiles_w;
  float* v;
};

// Its output transform: m, [16][>= blocks][tiles][c] (the products, laid out as v), into the
// tiles' 2x2 output pixels, plus the bias (and the residual), activated, stored into out
// (NCHWc rows of out_w pixels from the first tile row's top, blocks out_block floats
// apart) where the pixels fall within `rows` rows and out_w columns, but for the tiles
// `skip` marks.
struct WinogradOutput {
  const float* m;
  int64_t m_plane;  // floats between the 16 products' planes
  int64_t blocks, first, tiles, tiles_w;
  const float* bias;             // blocks * c, or null
  const float* residual;         // laid out as out, or null
  const Activation* activation;  // only kinds activation_in_registers() takes, or null
  float* out;
  int64_t out_block, rows, out_w;
  const uint8_t* skip;  // per tile, nonzero: leave its outputs as they are (null: none)
};

struct BlockedConvKernel {
  const char* name;  // blocked_conv_f32_<blocks>x<pixels>_<isa>: its largest register tile
  Isa isa;
  int lanes;       // c
  int max_blocks;  // F
  void (*run_row)(const BlockedConvRow& row);
  void (*winograd_input)(const WinogradInput& in);
  void (*winograd_output)(const WinogradOutput& out);
  // Copies n floats (dst null: checks only); whether any is a NaN or an infinity.
  bool (*copy_checking)(const float* src, float* dst, int64_t n);
};

// How a blocked convolution sums its products: directly (any window, stride, dilation),
// or by Winograd F(2x2, 3x3) (3x3 windows at stride 1: each 2x2 output tile from a 4x4
// input window in 16 multiplies per channel pair instead of 36, 2.25x fewer, the rest
// adds in the transforms; the 16 products are 16 1x1 convolutions the direct kernel
// runs over the transformed tiles).
enum class BlockedAlgorithm { kDirect, kWinograd };

// The kernel of one target (nullptr for the scalar one or a target the CPU cannot run).
const BlockedConvKernel* blocked_conv_kernel(Isa isa);

// Whether the blocked kernel can run s on isa with these layouts (an NCHWc input is copied
// only to add its zero border, not at all without padding; an NCHWc output is summed in
// place, with no reorder): a kernel exists for
// isa, the groups are whole blocks (group 1 with any channel counts, padded with zeros;
// or input and output channels per group multiples of c) or, with both tensors NCHW,
// each group's channels blocks of their own whose output lanes are at least half
// channels, and the channels of an NCHWc input or output are a multiple of c. Whether it
// is chosen is Conv's decision.
bool blocked_conv_applies(const ConvGeometry& s, Isa isa, BlockedLayouts layouts = {});

// Whether Winograd F(2x2, 3x3) can run s (one blocked_conv_applies to): a 3x3 window,
// stride 1, dilation 1, input channels per group whole blocks (and output channels per
// group, with groups).
bool winograd_applies(const ConvGeometry& s, Isa isa);
// The algorithm BlockedConv takes for s by default: Winograd where it applies and was
// measured faster (docs/performance.md), else direct.
BlockedAlgorithm default_blocked_algorithm(const ConvGeometry& s, Isa isa);

class BlockedConv {
 public:
  BlockedConv() = default;
  // Packs the weights [cout, cin / group, kh, kw]; s must be one blocked_conv_applies to
  // with these layouts (and winograd_applies to, for kWinograd).
  BlockedConv(const ConvGeometry& s, const float* weights, Isa isa, BlockedLayouts layouts = {});
  BlockedConv(const ConvGeometry& s, const float* weights, Isa isa, BlockedLayouts layouts, BlockedAlgorithm algorithm);

  const BlockedConvKernel& kernel() const { return *kernel_; }
  BlockedAlgorithm algorithm() const { return algorithm_; }
  int64_t packed_weight_floats() const { return static_cast<int64_t>(weights_.size()); }
  // Floats of workspace run(batch, ..., threads) needs, shared by the team: the input copy
  // and its flags, unless the team splits rows (then each thread copies its own).
  int64_t workspace_floats(int64_t batch, int threads) const;
  // Floats of the NCHWc input copy of one image, with its border (shared by the
  // threads), in whole cache lines; 0 when the input is read as it is: an NCHWc one
  // without padding, or an NCHW one a 1x1 stride-1 window reads (reads_nchw).
  int64_t input_floats() const;
  // Floats of input the team of run(batch, ..., threads) copies per image (the report's
  // figure): the copy's, or where each thread copies its rows, theirs (the rows their
  // windows share are copied by both); 0 where the input is read as it is.
  int64_t input_copy_floats(int64_t batch, int threads) const;
  // Floats of one thread's NCHWc partial sums: F output blocks (fewer if a group has
  // fewer; Winograd: all) x band_rows() output rows; 0 when the output is NCHWc (summed
  // in place).
  int64_t band_floats() const;
  int64_t band_rows() const { return band_rows_; }
  // Floats of one thread's kept scratch (ThreadScratch) run(batch, ..., threads) needs, in
  // whole cache lines: the band, Winograd's transformed input tiles and products of a
  // band, and the thread's copy of its input rows where the team splits rows.
  int64_t thread_floats(int64_t batch, int threads) const;
  // Input channels summed per pass over the output (the weights' L2 blocking).
  int64_t chunk_blocks() const { return chunk_blocks_; }
  // Input channels per block of the NCHWc input copy: c, or the input's channels when
  // it has fewer (group 1), so no zero lanes are multiplied.
  int64_t input_lanes() const { return in_lanes_; }

  // Whether a team of `team` threads splits the sums by output rows (each thread every
  // output block of its rows, and the input copy's rows it reads first) rather than by
  // tiles of output blocks (Winograd: each band's chunks of output blocks).
  bool splits_rows(int team) const;

  // y[n] = act(bias + weights (*) x[n] + residual[n]) for `batch` images, x and y in the
  // layouts the constructor was given; bias and residual (laid out as y) may be null; y
  // may be the residual's buffer but must not overlap x (std::invalid_argument). Each
  // output element is summed by one thread in a fixed order, so y does not depend on
  // `threads`. Winograd needs `weights`, the constructor's (unpacked): a NaN or an
  // infinity in a 4x4 input window would reach all four of its tile's outputs through the
  // transforms (and an infinity become NaN), so those tiles are summed directly from them
  // instead.
  // The team is at most own.threads() (each piece of thread_floats(batch, threads)).
  // `packed_weights`, when given, replaces the packed weights (direct sums only: a copy
  // from scale_packed_weights).
  void run(int64_t batch, const float* x, const float* bias, const Activation& act, float* y,
           std::span<float> workspace, const ThreadScratch& own, int threads, const float* residual = nullptr,
           const float* weights = nullptr, const float* packed_weights = nullptr) const;

  // The packed weights with each input channel's multiplied by scale[channel] (a fused
  // per-channel input scale folded into the weights, x (*) (w s) for (x s) (*) w), into
  // dst, packed_weight_floats() of them; direct sums only (std::invalid_argument).
  void scale_packed_weights(const float* scale, float* dst) const;

 private:
  int64_t items(int threads) const;  // the units of work `threads` threads share
  // Winograd's bands of output tiles (row-major) for a team of `team`, and the chunks of
  // output blocks each band's work is split into (each reads only its blocks' weights).
  int64_t winograd_bands(int team) const;
  int64_t winograd_chunks(int team) const;
  // Thread u's share of a team's Winograd items: bands [band0, band1) x chunks [chunk0,
  // chunk1), band-major.
  struct WinogradShare {
    int64_t band0, band1, chunk0, chunk1;
  };
  WinogradShare winograd_share(int u, int team) const;
  // The first tile of band `band` of `bands` (band `bands`: the number of tiles).
  int64_t band_first_tile(int64_t band, int64_t bands) const;
  int64_t output_tiles() const;  // tiles of F output blocks, every group's
  // Bands of near-equal size (at most band_rows()) that `rows` output rows are summed in.
  int64_t own_bands(int64_t rows) const { return (rows + band_rows_ - 1) / band_rows_; }
  int64_t tile_blocks() const { return std::min<int64_t>(kernel_->max_blocks, out_blocks_); }
  int team(int64_t batch, int threads) const;
  bool copies_input() const;
  // Whether a 1x1 stride-1 window over an unpadded NCHW input of whole blocks reads it in
  // place, a block's lanes planes apart (BlockedConvRow::x_lane), not from an NCHWc copy.
  bool reads_nchw() const;
  // Whether a team of `team` copies the input each thread its rows, into its kept scratch.
  bool private_copies(int team) const { return copies_input() && splits_rows(team); }
  // Kept floats for a team of `team`: kept_floats() (the band, Winograd's tiles), then the
  // thread's input copy and its flags where private_copies(team).
  int64_t kept_floats() const;
  int64_t kept_floats_for(int team) const;
  // Floats of an input copy of `rows` rows of every block, in whole lines.
  int64_t copy_floats(int64_t rows) const;
  // By rows: thread u's first output row, and the rows of the input copy its windows
  // read, [first, end).
  int64_t share_first_row(int u, int team) const;
  std::pair<int64_t, int64_t> share_input_rows(int u, int team) const;
  bool winograd() const { return algorithm_ == BlockedAlgorithm::kWinograd; }
  // Winograd's 2x2 output tiles: per row, in rows, and the tile rows whose tiles a band
  // holds at most.
  int64_t tiles_w() const { return (s_.out_w + 1) / 2; }
  int64_t tiles_h() const { return (s_.out_h + 1) / 2; }
  int64_t band_tile_rows() const { return band_rows_ / 2; }
  // The zero-bordered NCHWc input copy's rows and columns.
  int64_t padded_h() const;
  int64_t padded_w() const;
  // The rows [first_row, first_row + rows) of every block (of all groups', block by
  // block) of the zero-bordered NCHWc input one image's windows read: the team's copy,
  // a thread's, or the NCHWc input itself where it needs no border.
  struct PaddedInput {
    const float* data;
    float* copy;     // data, where this call writes it (null: the input itself)
    uint8_t* flags;  // Winograd: per row of each block, whether it holds a NaN or an infinity
    int64_t first_row, rows;
    // A thread's copy: set once it is written. A thread that takes another's items waits
    // for it (in practice never: each thread copies before its first item) where a
    // barrier after the copies made the faster thread wait for the slower one.
    std::atomic<bool>* copied = nullptr;
    const PaddedInput& ready() const {
      if (copied)
        while (!copied->load(std::memory_order_acquire)) std::this_thread::yield();
      return *this;
    }
  };
  // Where row py of block gb starts in in.data, and its flag in in.flags: row-major, so
  // threads that copy different rows write different cache lines (block-major, two
  // threads writing alternate runs of one line took it from each other's cache at every
  // run).
  // The window rows [first, end) by which output row oy reads the image rather than
  // its zero border.
  std::pair<int64_t, int64_t> image_rows(int64_t oy) const {
    const int64_t top = oy * s_.win.sh - s_.win.pad_top, d = s_.win.dh, k = s_.win.kh;
    const int64_t first = std::min(k, top >= 0 ? 0 : (d - 1 - top) / d);
    const int64_t end = std::min(k, top >= s_.h ? 0 : (s_.h - 1 - top) / d + 1);
    return {first, std::max(first, end)};
  }
  int64_t row_at(const PaddedInput& in, int64_t gb, int64_t py) const {
    const int64_t row = reads_nchw() ? padded_w() : padded_w() * in_lanes_;
    return gb * in.rows * padded_w() * in_lanes_ + (py - in.first_row) * row;
  }
  int64_t flag_at(const PaddedInput& in, int64_t gb, int64_t py) const {
    return (py - in.first_row) * s_.group * in_blocks_ + gb;
  }
  // Row py of the zero-bordered copy of block gb into d, from the NCHW or NCHWc image
  // xn; whether it holds a NaN or an infinity.
  bool copy_input_row(int64_t gb, int64_t py, const float* xn, float* d) const;
  // Winograd: the flags of a copy of `rows` rows, in whole lines of floats after it.
  int64_t flag_floats(int64_t rows) const;
  // Winograd's exact sums for the tile (ty, tx) of a band (ty counted from the band's
  // first tile row ty0) whose window holds a NaN or an infinity: the output blocks
  // [ob_first, ob_first + blocks) as the output transform stores them.
  void exact_tile(const PaddedInput& padded, const float* weights, const float* bias_blocks, int64_t ob_first,
                  int64_t blocks, int64_t ty0, int64_t ty, int64_t tx, int64_t rows, const float* residual,
                  const Activation* act, float* out, int64_t out_block) const;
  // An NCHW output's band: the activation where the tiles did not apply it, then NCHWc
  // -> NCHW with the residual summed on the way.
  void store_band(float* sums, int64_t out_block, int64_t g, int64_t ob0, int64_t blocks, int64_t oy0, int64_t rows,
                  float* yn, const float* rn, const Activation& activation, bool in_registers) const;
  // inputs: one per share of item0 (by rows), else one; item0: each share's first item.
  void winograd_items(std::span<const PaddedInput> inputs, std::span<const int64_t> item0, const float* weights,
                      const float* bias, const Activation& activation, bool in_registers, float* yn, const float* rn,
                      const ThreadScratch& own, int threads, WorkShares& shares) const;

  // Output columns [ox0, ox1) whose windows read the image by taps [kx0, kx1) of each row.
  struct ColumnSegment {
    int64_t ox0, ox1, kx0, kx1;
  };
  static std::vector<ColumnSegment> column_segments(const ConvGeometry& s);

  ConvGeometry s_;
  // A row's segments, where a third or more of its windows' taps read the zero border
  // (a dilated window wider than the plane: DeepLabV3's); else none (every row whole).
  std::vector<ColumnSegment> segments_;
  BlockedLayouts layouts_;
  BlockedAlgorithm algorithm_ = BlockedAlgorithm::kDirect;
  const BlockedConvKernel* kernel_ = nullptr;
  int64_t in_lanes_ = 0;                    // input channels per input block
  int64_t in_blocks_ = 0, out_blocks_ = 0;  // per group
  int64_t chunk_blocks_ = 0, band_rows_ = 0;
  // Direct: [group][output block][input block][kh][kw][c in][c out]; Winograd: the
  // transformed 4x4 weights, [16][group][output block][input block][c in][c out].
  AlignedVector<float> weights_;
};

// Defined in blocked_conv_<isa>.cc; constant-initialised.
extern const BlockedConvKernel blocked_conv_f32_2x6_avx2, blocked_conv_f32_4x7_avx512;

}  // namespace minfer::kernels
