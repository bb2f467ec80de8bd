#include "ops/kernels/blocked_conv.h"

#include <omp.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "ops/kernels/threads.h"
#include "ops/kernels/transpose.h"
#include "ops/kernels/work_shares.h"
#include "ops/kernels/workspace.h"

namespace minfer::kernels {
namespace {

// The packed weights one pass over the output reads per tile of output blocks are kept
// under this (L2 is 1 MiB per core on the machines measured; the input rows and the
// partial sums share it).
constexpr int64_t kWeightChunkBytes = 256 * 1024;
// A tile of output blocks whose packed weights are at most this many bytes fetches the
// next tile's while it sums (BlockedConvRow::prefetch): its item sums for a few
// microseconds, about what the weights' first pass took from L3 or memory, where
// nothing else covered it: RegNetX's 7x7 grouped layers (9 KiB a tile) took 0.85-0.88x
// the time with, AVX-512 and AVX2, and the model 0.97x (Zen 5). Fetching every tile's,
// ResNet-50 and GoogLeNet took 1.01x.
constexpr int64_t kPrefetchTileBytes = 64 * 1024;
// A chunk of this many input blocks or more (1x1 layers of 1024 input channels or more
// on AVX-512) over an input larger than kL2Bytes is read with software prefetches by one
// thread too: FCN-ResNet50's 1024- and 2048-channel 1x1 layers at 28x28 (3.2 and 6.4 MB
// of input) took 0.39-0.66x the time with; inputs that fit in L2 took 1.01-1.05x
// (ResNet-50's 1024-channel layers at 14x14, MobileNetV1's last at 7x7), and chunks of
// 32 blocks (ResNet-50's 512-channel layers at 28x28, 1.6 MB) 1.02-1.05x (Zen 5).
constexpr int64_t kManyInputBlocks = 64;
constexpr int64_t kL2Bytes = 1024 * 1024;
// A thread's partial sums (F output blocks x a band of output rows) are kept under this
// many floats (64 KiB), in L2 beside the weights.
constexpr int64_t kBandFloats = 16 * 1024;
// Winograd: a band's transformed input tiles and products (16 vectors per tile and block
// each) are kept under this (at least), in L2 beside one tile of output blocks' weights.
constexpr int64_t kWinogradBandBytes = 384 * 1024;
// Winograd by output blocks: chunks of them per thread of the team.
constexpr int64_t kWinogradChunksPerThread = 4;

int64_t blocks_of(int64_t channels, int64_t lanes) {
  return (channels + lanes - 1) / lanes;
}

}  // namespace

const BlockedConvKernel* blocked_conv_kernel(Isa isa) {
  if (!isa_runnable(isa)) return nullptr;
  return per_isa<const BlockedConvKernel*>(isa, nullptr, &blocked_conv_f32_2x6_avx2, &blocked_conv_f32_4x7_avx512);
}

bool blocked_conv_applies(const ConvGeometry& s, Isa isa, BlockedLayouts layouts) {
  const BlockedConvKernel* k = blocked_conv_kernel(isa);
  if (!k) return false;
  if ((layouts.input_blocked && s.cin % k->lanes != 0) || (layouts.output_blocked && s.cout % k->lanes != 0))
    return false;
  const int64_t cin_g = s.cin_per_group(), cout_g = s.cout_per_group();
  if (s.group == 1 || (cin_g % k->lanes == 0 && cout_g % k->lanes == 0)) return true;
  // In NCHW each group's channels may also be blocks of their own, the last one partly
  // zero lanes (the input copy and the output's reorder take a group's channels alone),
  // where that runs at most twice the multiply-adds (fewer input channels than a block
  // are copied as that many lanes, so only the output's zero lanes count): RegNetY's 13
  // and 55 groups of 8 channels on AVX-512, which no merge of neighbouring groups divides.
  return !layouts.any() && blocks_of(cout_g, k->lanes) * k->lanes <= 2 * cout_g;
}

bool winograd_applies(const ConvGeometry& s, Isa isa) {
  const BlockedConvKernel* k = blocked_conv_kernel(isa);
  const Window2d& w = s.win;
  return k && s.cin_per_group() % k->lanes == 0 && (s.group == 1 || s.cout_per_group() % k->lanes == 0) && w.kh == 3 &&
         w.kw == 3 && w.sh == 1 && w.sw == 1 && w.dh == 1 && w.dw == 1;
}

namespace {

// Every group's: 16 x cin / group x cout floats.
int64_t transformed_weight_bytes(const ConvGeometry& s, int64_t lanes) {
  return checked_mul(
      {16, blocks_of(s.cin_per_group(), lanes) * lanes, s.group * blocks_of(s.cout_per_group(), lanes) * lanes, 4});
}

// Winograd's tile rows per band: a band's transformed input tiles and products within
// kWinogradBandBytes or, where the transformed weights are large (each band reads them
// all once), up to a quarter of them and at most 1 MiB (256 -> 256 at 14x14: 1.04-1.09
// ms in bands of 4 tile rows, 1.16-1.22 in bands of 1); bands of near-equal size.
int64_t winograd_band_tile_rows(const ConvGeometry& s, int64_t lanes) {
  const int64_t tiles_w = (s.out_w + 1) / 2, tiles_h = (s.out_h + 1) / 2;
  const int64_t blocks = s.group * (blocks_of(s.cin_per_group(), lanes) + blocks_of(s.cout_per_group(), lanes));
  const int64_t tile_row_bytes = checked_mul({16, blocks, lanes, tiles_w, 4});
  const int64_t band_bytes =
      std::clamp<int64_t>(transformed_weight_bytes(s, lanes) / 4, kWinogradBandBytes, 1024 * 1024);
  const int64_t most = std::clamp<int64_t>(band_bytes / tile_row_bytes, 1, tiles_h);
  const int64_t bands = (tiles_h + most - 1) / most;
  return (tiles_h + bands - 1) / bands;
}

}  // namespace

// Winograd where its multiplies (16 per 2x2 tile and channel pair; the tiles cover the
// plane rounded up to even sizes) are at most 0.6x the direct sums' (9 per pixel: 0.44x
// at 56x56 to 14x14, 0.58x at 7x7, 0.64x at 5x5) and its transformed weights fit in 16
// MiB (each band reads them all: from L3 up to there; a 1024 -> 1024 layer's 64 MiB
// came from memory, 0.76-0.90x the direct time on AVX-512, 0.95-1.15x on AVX2).
// conv_bench, one thread, AVX-512: 0.50-0.58x the direct sums' time at 56x56 to 14x14
// with 64-256 channels, 0.74-0.85x at 7x7 (0.57x with two threads); AVX2 0.47-0.72x.
BlockedAlgorithm default_blocked_algorithm(const ConvGeometry& s, Isa isa) {
  if (!winograd_applies(s, isa)) return BlockedAlgorithm::kDirect;
  const int64_t tiles_h = (s.out_h + 1) / 2, tiles_w = (s.out_w + 1) / 2;
  const bool fewer_multiplies = 16 * tiles_h * tiles_w * 10 <= 9 * s.out_h * s.out_w * 6;
  // Past 16 MiB the transformed weights come from memory once per band (a tile row at
  // such channel counts): worth it from 14 tiles a row, each weight read then
  // multiplying 14 tiles or more (FCN-ResNet50's head, 2048 -> 512 at 28x28, 64 MiB:
  // 0.67x the direct time on AVX-512, 0.57x on AVX2, in the model on Zen 5), not at 7
  // (1024 -> 1024 at 14x14: 0.76-0.90x on AVX-512 but 0.95-1.15x on AVX2).
  const bool weights_in_l3 =
      transformed_weight_bytes(s, blocked_conv_kernel(isa)->lanes) <= 16 * 1024 * 1024 || tiles_w >= 14;
  // Groups of one or two blocks leave little to multiply per transformed value: RegNetX's
  // (16 channels per group) measured 0.71-0.91x at 56x56 to 14x14 but 1.30x at 7x7.
  const bool enough_tiles = s.group == 1 || tiles_h * tiles_w >= 7 * 7;
  return fewer_multiplies && weights_in_l3 && enough_tiles ? BlockedAlgorithm::kWinograd : BlockedAlgorithm::kDirect;
}

// A row's column segments (segments_): runs of output columns whose windows read the
// image by the same taps of each window row, where a third or more of a row's taps read
// the zero border; else none. Narrower tiles are slower per multiply-add, so a border of
// a pixel or two (a 3x3 window's) is summed as zeros.
std::vector<BlockedConv::ColumnSegment> BlockedConv::column_segments(const ConvGeometry& s) {
  const Window2d& w = s.win;
  std::vector<ColumnSegment> segments;
  int64_t valid = 0;
  for (int64_t ox = 0; ox < s.out_w; ++ox) {
    const int64_t left = ox * w.sw - w.pad_left;  // image column of tap 0
    const int64_t kx0 = std::min(w.kw, left >= 0 ? 0 : (w.dw - 1 - left) / w.dw);
    const int64_t kx1 = std::max(kx0, std::min(w.kw, left >= s.w ? 0 : (s.w - 1 - left) / w.dw + 1));
    valid += kx1 - kx0;
    if (!segments.empty() && segments.back().kx0 == kx0 && segments.back().kx1 == kx1)
      segments.back().ox1 = ox + 1;
    else
      segments.push_back({ox, ox + 1, kx0, kx1});
  }
  if (3 * valid > 2 * s.out_w * w.kw) segments.clear();
  return segments;
}

BlockedConv::BlockedConv(const ConvGeometry& s, const float* weights, Isa isa, BlockedLayouts layouts)
    : BlockedConv(s, weights, isa, layouts, default_blocked_algorithm(s, isa)) {}

BlockedConv::BlockedConv(const ConvGeometry& s, const float* weights, Isa isa, BlockedLayouts layouts,
                         BlockedAlgorithm algorithm)
    : s_(s), layouts_(layouts), algorithm_(algorithm), kernel_(blocked_conv_kernel(isa)) {
  const int64_t C = kernel_->lanes, cin_g = s.cin_per_group(), cout_g = s.cout_per_group();
  const int64_t taps = s.win.kh * s.win.kw;
  in_lanes_ = cin_g < C ? cin_g : C;
  in_blocks_ = blocks_of(cin_g, in_lanes_);
  out_blocks_ = blocks_of(cout_g, C);
  if (winograd()) {
    band_rows_ = 2 * winograd_band_tile_rows(s, C);
    chunk_blocks_ = in_blocks_;
    // U = G g G^T per channel pair, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1];
    // output blocks group by group, each over its group's input blocks.
    weights_.assign(checked_mul({16, s.group * out_blocks_, in_blocks_, C, C}), 0.0f);
    for (int64_t co = 0; co < s.cout; ++co)
      for (int64_t ci = 0; ci < cin_g; ++ci) {
        const int64_t gob = co / cout_g * out_blocks_ + co % cout_g / C, lane_o = co % cout_g % C;
        const float* g = weights + (co * cin_g + ci) * 9;
        double gg[4][3];  // G g
        for (int k = 0; k < 3; ++k) {
          gg[0][k] = g[k];
          gg[1][k] = (double(g[k]) + g[3 + k] + g[6 + k]) / 2;
          gg[2][k] = (double(g[k]) - g[3 + k] + g[6 + k]) / 2;
          gg[3][k] = g[6 + k];
        }
        for (int i = 0; i < 4; ++i) {
          const double u[4] = {gg[i][0], (gg[i][0] + gg[i][1] + gg[i][2]) / 2, (gg[i][0] - gg[i][1] + gg[i][2]) / 2,
                               gg[i][2]};
          for (int j = 0; j < 4; ++j)
            weights_[(((4 * i + j) * s.group * out_blocks_ + gob) * in_blocks_ + ci / C) * C * C + ci % C * C +
                     lane_o] = static_cast<float>(u[j]);
        }
      }
    return;
  }
  segments_ = column_segments(s);
  band_rows_ = std::clamp<int64_t>(kBandFloats / (tile_blocks() * C * s.out_w), 1, s.out_h);
  chunk_blocks_ =
      std::clamp<int64_t>(kWeightChunkBytes / (kernel_->max_blocks * C * in_lanes_ * taps * 4), 1, in_blocks_);
  weights_.assign(checked_mul({s.group, out_blocks_, in_blocks_, taps, in_lanes_, C}), 0.0f);
  for (int64_t co = 0; co < s.cout; ++co) {
    const int64_t g = co / cout_g, ob = (co % cout_g) / C, lane_o = co % cout_g % C;
    for (int64_t ci = 0; ci < cin_g; ++ci)
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t ib = ci / in_lanes_, lane_i = ci % in_lanes_;
        weights_[((((g * out_blocks_ + ob) * in_blocks_ + ib) * taps + t) * in_lanes_ + lane_i) * C + lane_o] =
            weights[(co * cin_g + ci) * taps + t];
      }
  }
}

bool BlockedConv::copies_input() const {
  const Window2d& w = s_.win;
  return winograd() || (!layouts_.input_blocked && !reads_nchw()) ||
         w.pad_top + w.pad_bottom + w.pad_left + w.pad_right > 0;
}

bool BlockedConv::reads_nchw() const {
  const Window2d& w = s_.win;
  return !winograd() && !layouts_.input_blocked && w.kh == 1 && w.kw == 1 && w.sh == 1 && w.sw == 1 &&
         w.pad_top + w.pad_bottom + w.pad_left + w.pad_right == 0 && in_lanes_ == kernel_->lanes &&
         s_.cin_per_group() % in_lanes_ == 0;
}

// Winograd's windows reach 2 rows and columns past the last tile's output pixels.
int64_t BlockedConv::padded_h() const {
  if (winograd()) return 2 * tiles_h() + 2;
  return copies_input() ? s_.h + s_.win.pad_top + s_.win.pad_bottom : s_.h;
}

int64_t BlockedConv::padded_w() const {
  if (winograd()) return 2 * tiles_w() + 2;
  return copies_input() ? s_.w + s_.win.pad_left + s_.win.pad_right : s_.w;
}

int64_t BlockedConv::input_floats() const {
  return copies_input() ? copy_floats(padded_h()) : 0;
}

int64_t BlockedConv::input_copy_floats(int64_t batch, int threads) const {
  if (!copies_input()) return 0;
  const int team_size = team(batch, threads);
  int64_t rows = padded_h();
  if (private_copies(team_size)) {
    rows = 0;
    for (int u = 0; u < team_size; ++u) {
      const auto [first, end] = share_input_rows(u, team_size);
      rows += end - first;
    }
  }
  return checked_mul({s_.group, in_blocks_, rows, padded_w(), in_lanes_});
}

int64_t BlockedConv::band_floats() const {
  if (layouts_.output_blocked) return 0;
  return checked_mul({winograd() ? s_.group * out_blocks_ : tile_blocks(), kernel_->lanes, band_rows_, s_.out_w});
}

int64_t BlockedConv::kept_floats() const {
  if (!winograd()) return whole_lines(band_floats());
  // The band's transformed tiles and products, then its bias padded to whole blocks and
  // a byte per tile (those summed directly).
  const int64_t C = kernel_->lanes, tiles = band_tile_rows() * tiles_w();
  return whole_lines(checked_add({checked_mul({16, s_.group * (in_blocks_ + out_blocks_), tiles, C}), band_floats(),
                                  s_.group * out_blocks_ * C, (tiles + 3) / 4}));
}

int64_t BlockedConv::thread_floats(int64_t batch, int threads) const {
  return kept_floats_for(team(batch, threads));
}

int64_t BlockedConv::kept_floats_for(int team) const {
  if (!private_copies(team)) return kept_floats();
  int64_t rows = 0;
  for (int u = 0; u < team; ++u) {
    const auto [first, end] = share_input_rows(u, team);
    rows = std::max(rows, end - first);
  }
  return checked_add({kept_floats(), copy_floats(rows), flag_floats(rows)});
}

int64_t BlockedConv::copy_floats(int64_t rows) const {
  return whole_lines(checked_mul({s_.group, in_blocks_, rows, padded_w(), in_lanes_}));
}

int BlockedConv::team(int64_t batch, int threads) const {
  const int64_t macs = checked_mul({batch, s_.cout, s_.out_h, s_.out_w, s_.cin_per_group(), s_.win.kh, s_.win.kw});
  return threads_worth_starting(macs, items(threads), threads, Work::kDense);
}

// A team splits the output rows where each thread gets four or more, or two or more
// where a split by blocks has too few tiles of them (under four a thread) to even out;
// else the tiles of output blocks. A 7x7 plane's rows split 4 + 3 on two threads, each
// reading all the weights: ResNet-50's 1x1 layers at 7x7 (8 to 32 tiles) took
// 0.78-0.90x the time by blocks, where untouched layers moved 0.93-0.97x in the same
// runs; GoogLeNet's 832 -> 128 ones (2 tiles) 1.13-1.14x (Zen 5, 2026-12-04). By rows,
// a thread reads the input rows it wrote in the layer before (every NCHWc layer splits
// so, as the direct pointwise kernel splits pixels), where by blocks it reads every
// row: on a Zen 5 host whose two vCPUs share no cache (a 450 ns round trip between
// them) ResNet-50's 1x1 layers at 28x28 and 14x14 took 0.88-0.93x the time by rows,
// GoogLeNet 0.95x, RegNetX 0.88-0.93x (sums of per-op minima, two threads). Each thread
// reads all the weights, from L3 or memory. Where the weights are four times the input
// or more, the tiles of output blocks all the same (each thread streams its share of
// the weights, not all of them, and reads the whole input, a small one): RegNetX's 400
// -> 400 1x1 layers at 7x7 (7 tiles; 640 KiB of weights, 78 KiB of input) took
// 0.91-0.94x the time, the model 0.96x on two threads (Zen 5); the 1024 -> 256 ones of
// ResNet-50 at 14x14 (1.25 times) took 1.5x by blocks, half their input written in the
// other vCPU's cache. Winograd splits rows where each thread gets two bands of tiles or
// more (then its share is whole bands), else the output blocks, each thread a chunk of
// every band's: by blocks, each thread transforms every row (ResNet-18's 56x56 layers
// took 0.50-0.53 ms on two threads that way, fastest of 40 runs, Zen 5; 0.445-0.52 by
// rows), but reads only its chunk's transformed weights, again for each band. A thread
// with one band read all of them once, from memory (the next layers' evict them):
// ResNet-18's and ResNet-50's 256 -> 256 layers at 14x14 (two bands, 4 MiB of weights)
// took 0.88-0.93x the time by blocks, GoogLeNet's 14x14 ones 0.81-0.92x; the 28x28 ones
// (14 bands) 1.06-1.10x.
bool BlockedConv::splits_rows(int team) const {
  if (team <= 1) return false;
  if (winograd()) return winograd_bands(1) >= 2 * team;
  if (output_tiles() >= team && packed_weight_floats() >= 4 * s_.cin * s_.h * s_.w) return false;
  return s_.out_h >= 4 * team || (s_.out_h >= 2 * team && output_tiles() < 4 * team);
}

// The fewest bands of at most band_tile_rows() tile rows' tiles; where a team splits
// them by rows, a multiple of the team, so that each thread gets as many tiles, where
// there are enough tiles (band_first_tile) for no band to be empty.
int64_t BlockedConv::winograd_bands(int team) const {
  const int64_t fewest = (tiles_h() + band_tile_rows() - 1) / band_tile_rows();
  if (!splits_rows(team)) return fewest;
  return std::min((fewest + team - 1) / team * team, layouts_.output_blocked ? tiles_h() * tiles_w() : tiles_h());
}

// An NCHWc output's bands split the tiles evenly, rows or not (a 14x14 plane's 49 tiles
// in two bands: 25 and 24, where whole tile rows made 4 and 3 rows, 28 and 21 tiles, on
// two threads); an NCHW output's hold whole tile rows (its band of partial sums goes back
// to NCHW a row at a time).
int64_t BlockedConv::band_first_tile(int64_t band, int64_t bands) const {
  if (layouts_.output_blocked) return band * tiles_h() * tiles_w() / bands;
  return band * tiles_h() / bands * tiles_w();
}

// A team that splits output blocks splits them into chunks (of every band), a few per
// thread, so that a thread that is ahead takes the last chunks of another's share; by
// rows, one chunk.
int64_t BlockedConv::winograd_chunks(int team) const {
  if (team <= 1 || splits_rows(team)) return 1;
  return std::min<int64_t>(kWinogradChunksPerThread * team, output_tiles());
}

// By rows, thread u's whole bands; else its chunks of every band. Band-major, so that a
// thread transforms each band's input once for all its chunks, and one taking another's
// items from the back starts with the band it transformed last.
BlockedConv::WinogradShare BlockedConv::winograd_share(int u, int team) const {
  const int64_t bands = winograd_bands(team), chunks = winograd_chunks(team);
  if (splits_rows(team)) return {bands * u / team, bands * (u + 1) / team, 0, chunks};
  return {0, bands, chunks * u / team, chunks * (u + 1) / team};
}

int64_t BlockedConv::output_tiles() const {
  return s_.group * ((out_blocks_ + kernel_->max_blocks - 1) / kernel_->max_blocks);
}

int64_t BlockedConv::items(int threads) const {
  if (winograd()) return winograd_bands(threads) * winograd_chunks(threads);
  // Tiles of output blocks x bands, or pairs of rows where a team splits rows.
  return std::max(output_tiles() * ((s_.out_h + band_rows_ - 1) / band_rows_), s_.out_h / 2);
}

int64_t BlockedConv::workspace_floats(int64_t batch, int threads) const {
  return private_copies(team(batch, threads)) ? 0 : input_floats() + flag_floats(padded_h());
}

// Thread u's first output row: by rows, its even share; Winograd, the first tile row of
// its whole bands.
int64_t BlockedConv::share_first_row(int u, int team) const {
  if (!winograd()) return s_.out_h * u / team;
  const int64_t bands = winograd_bands(team);
  return 2 * (band_first_tile(bands * u / team, bands) / tiles_w());
}

// The rows of the input copy thread u's windows read, [first, end): from its first
// output row's window to its last one's (Winograd: its last tile's 4x4 windows).
std::pair<int64_t, int64_t> BlockedConv::share_input_rows(int u, int team) const {
  const Window2d& w = s_.win;
  if (winograd()) {
    const int64_t bands = winograd_bands(team), last = band_first_tile(bands * (u + 1) / team, bands) - 1;
    return {share_first_row(u, team), 2 * (last / tiles_w()) + 4};
  }
  return {share_first_row(u, team) * w.sh, (share_first_row(u + 1, team) - 1) * w.sh + (w.kh - 1) * w.dh + 1};
}

int64_t BlockedConv::flag_floats(int64_t rows) const {
  return winograd() ? whole_lines((s_.group * in_blocks_ * rows + 3) / 4) : 0;
}

bool BlockedConv::copy_input_row(int64_t gb, int64_t py, const float* xn, float* d) const {
  const Window2d& win = s_.win;
  const int64_t C = kernel_->lanes, Ci = in_lanes_, cin_g = s_.cin_per_group(), wp = padded_w();
  const int64_t iy = py - win.pad_top;
  const int64_t g = gb / in_blocks_, ib = gb % in_blocks_;
  if (iy < 0 || iy >= s_.h) {
    std::fill_n(d, wp * Ci, 0.0f);
    return false;
  }
  std::fill_n(d, win.pad_left * Ci, 0.0f);
  std::fill_n(d + (win.pad_left + s_.w) * Ci, (wp - win.pad_left - s_.w) * Ci, 0.0f);
  float* interior = d + win.pad_left * Ci;
  if (layouts_.input_blocked) {
    const float* row = xn + (gb * s_.h + iy) * s_.w * C;
    if (winograd()) return kernel_->copy_checking(row, interior, s_.w * C);
    std::copy_n(row, s_.w * C, interior);
    return false;
  }
  const int64_t lanes = std::min(Ci, cin_g - ib * Ci);
  transpose(xn + ((g * cin_g + ib * Ci) * s_.h + iy) * s_.w, s_.h * s_.w, lanes, s_.w, interior, Ci);
  for (int64_t lane = lanes; lane < Ci; ++lane)
    for (int64_t ix = 0; ix < s_.w; ++ix) interior[ix * Ci + lane] = 0.0f;
  return winograd() && kernel_->copy_checking(interior, nullptr, s_.w * Ci);
}

void BlockedConv::exact_tile(const PaddedInput& padded, const float* weights, const float* bias_blocks,
                             int64_t ob_first, int64_t blocks, int64_t ty0, int64_t ty, int64_t tx, int64_t rows,
                             const float* residual, const Activation* act, float* out, int64_t out_block) const {
  const int64_t C = kernel_->lanes;
  for (int64_t b = ob_first; b < ob_first + blocks; ++b)
    for (int64_t i = 0; i < 2 && 2 * ty + i < rows; ++i)
      for (int64_t k = 0; k < 2 && 2 * tx + k < s_.out_w; ++k) {
        // The 3x3 window of output pixel (2 (ty0 + ty) + i, 2 tx + k) starts at that
        // padded row and column.
        const int64_t py = 2 * (ty0 + ty) + i, px = 2 * tx + k;
        const int64_t at = (b - ob_first) * out_block + ((2 * ty + i) * s_.out_w + px) * C;
        float sums[16];
        for (int64_t lane = 0; lane < C; ++lane) {
          // Block b of the output is channel b * C + lane (groups hold whole blocks).
          const int64_t co = b * C + lane, cin_g = s_.cin_per_group(), ci0 = co / s_.cout_per_group() * cin_g;
          float sum = bias_blocks[co];
          if (co < s_.cout)
            for (int64_t ci = 0; ci < cin_g; ++ci)
              for (int64_t ky = 0; ky < 3; ++ky)
                for (int64_t kx = 0; kx < 3; ++kx)
                  sum += padded.data[row_at(padded, (ci0 + ci) / C, py + ky) + (px + kx) * C + (ci0 + ci) % C] *
                         weights[((co * cin_g + ci) * 3 + ky) * 3 + kx];
          sums[lane] = residual ? sum + residual[at + lane] : sum;
        }
        if (act) act->apply(sums, C);
        std::copy_n(sums, C, out + at);
      }
}

void BlockedConv::store_band(float* sums, int64_t out_block, int64_t g, int64_t ob0, int64_t blocks, int64_t oy0,
                             int64_t rows, float* yn, const float* rn, const Activation& activation,
                             bool in_registers) const {
  // The other activations on the band while it is in L1, then NCHWc -> NCHW; with a
  // residual, summed as it goes (each residual element read before the output element
  // at its place is written: the output may be the residual's buffer), then the
  // activation on each written row.
  const int64_t C = kernel_->lanes, cout_g = s_.cout_per_group(), plane = s_.out_h * s_.out_w;
  if (!rn && !in_registers && activation.kind != ActivationKind::kNone) activation.apply(sums, blocks * out_block);
  for (int64_t f = 0; f < blocks && (ob0 + f) * C < cout_g; ++f) {
    const int64_t lanes = std::min(C, cout_g - (ob0 + f) * C);
    const int64_t at = ((g * cout_g + (ob0 + f) * C) * s_.out_h + oy0) * s_.out_w;
    transpose(sums + f * out_block, C, rows * s_.out_w, lanes, yn + at, plane, rn ? rn + at : nullptr);
    if (rn && activation.kind != ActivationKind::kNone)
      for (int64_t c = 0; c < lanes; ++c) activation.apply(yn + at + c * plane, rows * s_.out_w);
  }
}

// Called by every thread of run()'s team, which takes items from `shares`: each band of
// tile rows is transformed, its 16 products summed as 1x1 convolutions by the direct
// kernel, and transformed back into the output (NCHWc) or the thread's band (NCHW), a
// chunk of output blocks per item.
void BlockedConv::winograd_items(std::span<const PaddedInput> inputs, std::span<const int64_t> item0,
                                 const float* weights, const float* bias, const Activation& activation,
                                 bool in_registers, float* yn, const float* rn, const ThreadScratch& own, int threads,
                                 WorkShares& shares) const {
  const int64_t C = kernel_->lanes, F = kernel_->max_blocks, tw = tiles_w();
  const int64_t bands = winograd_bands(threads), chunks = winograd_chunks(threads);
  const int64_t plane = s_.out_h * s_.out_w;
  // Input and output blocks of all groups, group by group; the output's in tiles of F
  // blocks within a group, chunks of whole tiles.
  const int64_t all_in = s_.group * in_blocks_, all_out = s_.group * out_blocks_;
  const int64_t group_tiles = (out_blocks_ + F - 1) / F, all_tiles = output_tiles();
  const auto first_block = [&](int64_t tile) {
    return tile >= all_tiles ? all_out : tile / group_tiles * out_blocks_ + tile % group_tiles * F;
  };
  float* v = own.floats(omp_get_thread_num(), kept_floats(), "blocked convolution").data();
  float* m = v + 16 * all_in * band_tile_rows() * tw * C;
  float* band = m + 16 * all_out * band_tile_rows() * tw * C;
  float* bias_blocks = band + band_floats();
  for (int64_t i = 0; i < all_out * C; ++i) bias_blocks[i] = bias && i < s_.cout ? bias[i] : 0.0f;
  uint8_t* skip = reinterpret_cast<uint8_t*>(bias_blocks + all_out * C);
  static constexpr float kZeros[4 * 16] = {};
  const bool residual_first = rn && layouts_.output_blocked;
  const Activation* act = in_registers ? &activation : nullptr;
  int64_t v_band = -1;  // the band whose transformed input v holds
  for (int64_t item; (item = shares.take(omp_get_thread_num())) >= 0;) {
    // The share that holds the item, its band and chunk; the band's tiles, from column
    // fx of tile row ty0, and its output rows from oy0.
    const int u = static_cast<int>(std::upper_bound(item0.begin(), item0.end(), item) - item0.begin()) - 1;
    const WinogradShare share = winograd_share(u, threads);
    const int64_t j = item - item0[u], share_chunks = share.chunk1 - share.chunk0;
    const int64_t band_i = share.band0 + j / share_chunks, chunk_i = share.chunk0 + j % share_chunks;
    const int64_t first = band_first_tile(band_i, bands), tiles = band_first_tile(band_i + 1, bands) - first;
    const int64_t ty0 = first / tw, fx = first % tw, tile_rows = (fx + tiles + tw - 1) / tw;
    const int64_t oy0 = 2 * ty0, rows = std::min(2 * tile_rows, s_.out_h - oy0);
    const int64_t t0 = all_tiles * chunk_i / chunks, t1 = all_tiles * (chunk_i + 1) / chunks;
    const int64_t ob_first = first_block(t0), blocks = first_block(t1) - ob_first;
    const PaddedInput& padded = inputs[inputs.size() == 1 ? 0 : u].ready();  // by rows, each share's own copy
    if (band_i != v_band)
      kernel_->winograd_input({padded.data + row_at(padded, 0, oy0), padded.rows * padded_w() * C, padded_w() * C,
                               all_in, fx, tiles, tw, v});
    v_band = band_i;
    BlockedConvRow r;
    r.cin_lanes = C;
    r.x_block = tiles * C;
    r.x_row = tiles * C;
    r.cin_blocks = in_blocks_;
    r.w_block = in_blocks_ * C * C;
    r.init = kZeros;
    r.out_block = tiles * C;
    r.out_w = tiles;
    r.sw = r.kh = r.kw = r.dh = r.dw = r.w_taps = r.w_kw = 1;
    for (int64_t xi = 0; xi < 16; ++xi)
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t g = t / group_tiles, ob = t % group_tiles * F, gob = g * out_blocks_ + ob;
        r.blocks = static_cast<int>(std::min(F, out_blocks_ - ob));
        r.x = v + (xi * all_in + g * in_blocks_) * tiles * C;
        r.w = weights_.data() + (xi * all_out + gob) * in_blocks_ * C * C;
        r.out = m + (xi * all_out + gob) * tiles * C;
        kernel_->run_row(r);
      }
    const float* products = m + ob_first * tiles * C;
    const int64_t at = (ob_first * s_.out_h + oy0) * s_.out_w * C;  // in an NCHWc output
    float* out = layouts_.output_blocked ? yn + at : band;
    const int64_t out_block = layouts_.output_blocked ? plane * C : rows * s_.out_w * C;
    const float* residual = residual_first ? rn + at : nullptr;
    // The tiles whose windows hold a NaN or an infinity (only in tile rows whose window
    // rows were flagged when the input was copied) are summed directly, before the
    // output transform, which skips them: it may overwrite a residual they read.
    std::fill_n(skip, tiles, uint8_t{0});
    bool any_skipped = false, flagged = false;
    for (int64_t tile = 0; tile < tiles; ++tile) {
      const int64_t ty = (fx + tile) / tw, tx = (fx + tile) % tw;
      if (tile == 0 || tx == 0) {
        flagged = false;
        for (int64_t ib = 0; ib < all_in; ++ib)
          for (int64_t y = 2 * (ty0 + ty); y < 2 * (ty0 + ty) + 4; ++y)
            flagged |= padded.flags[flag_at(padded, ib, y)] != 0;
      }
      if (!flagged) continue;
      bool nonfinite = false;
      for (int64_t ib = 0; ib < all_in && !nonfinite; ++ib)
        for (int64_t y = 0; y < 4 && !nonfinite; ++y)
          nonfinite =
              kernel_->copy_checking(padded.data + row_at(padded, ib, 2 * (ty0 + ty) + y) + 2 * tx * C, nullptr, 4 * C);
      if (!nonfinite) continue;
      exact_tile(padded, weights, bias_blocks, ob_first, blocks, ty0, ty, tx, rows, residual, act, out, out_block);
      skip[tile] = 1;
      any_skipped = true;
    }
    kernel_->winograd_output({products, all_out * tiles * C, blocks, fx, tiles, tw, bias_blocks + ob_first * C,
                              residual, act, out, out_block, rows, s_.out_w, any_skipped ? skip : nullptr});
    if (layouts_.output_blocked) {
      // The band's own tiles only: an NCHWc output's bands split tile rows, so another
      // band's tiles (another thread's) may share its first and last rows.
      if (!in_registers && activation.kind != ActivationKind::kNone)
        for (int64_t tile = 0; tile < tiles;) {
          const int64_t ty = (fx + tile) / tw, tx = (fx + tile) % tw, n = std::min(tw - tx, tiles - tile);
          const int64_t x0 = 2 * tx, x1 = std::min(2 * (tx + n), s_.out_w);
          for (int64_t f = 0; f < blocks; ++f)
            for (int64_t i = 0; i < 2 && 2 * ty + i < rows; ++i)
              activation.apply(out + f * plane * C + ((2 * ty + i) * s_.out_w + x0) * C, (x1 - x0) * C);
          tile += n;
        }
      continue;
    }
    // To NCHW a group at a time (store_band counts blocks within a group).
    for (int64_t b = ob_first; b < ob_first + blocks;) {
      const int64_t g = b / out_blocks_, n = std::min(ob_first + blocks, (g + 1) * out_blocks_) - b;
      store_band(band + (b - ob_first) * out_block, out_block, g, b % out_blocks_, n, oy0, rows, yn, rn, activation,
                 in_registers);
      b += n;
    }
  }
}

void BlockedConv::scale_packed_weights(const float* scale, float* dst) const {
  if (winograd()) throw std::invalid_argument("blocked convolution: scaled weights are for direct sums");
  const int64_t C = kernel_->lanes, Ci = in_lanes_, cin_g = s_.cin_per_group(), taps = s_.win.kh * s_.win.kw;
  const float* w = weights_.data();
  // [group][output block][input block][tap][input lane][output lane]: each run of C
  // output lanes belongs to one input channel.
  for (int64_t g = 0; g < s_.group; ++g)
    for (int64_t ob = 0; ob < out_blocks_; ++ob)
      for (int64_t ib = 0; ib < in_blocks_; ++ib)
        for (int64_t t = 0; t < taps; ++t)
          for (int64_t lane = 0; lane < Ci; ++lane, w += C, dst += C) {
            const int64_t ci = ib * Ci + lane;
            const float factor = ci < cin_g ? scale[g * cin_g + ci] : 0.0f;
            for (int64_t o = 0; o < C; ++o) dst[o] = w[o] * factor;
          }
}

void BlockedConv::run(int64_t batch, const float* x, const float* bias, const Activation& act, float* y,
                      std::span<float> workspace, const ThreadScratch& own, int threads, const float* residual,
                      const float* weights, const float* packed_weights) const {
  if (winograd() && !weights) throw std::invalid_argument("blocked convolution: Winograd needs the unpacked weights");
  if (winograd() && packed_weights) throw std::invalid_argument("blocked convolution: Winograd packs its own weights");
  const float* packed = packed_weights ? packed_weights : weights_.data();
  // With no barrier between the input copies and the sums, a thread may write y while
  // another still reads x.
  const auto at = [](const float* p) { return reinterpret_cast<uintptr_t>(p); };
  if (at(y) < at(x + batch * s_.cin * s_.h * s_.w) && at(x) < at(y + batch * s_.cout * s_.out_h * s_.out_w))
    throw std::invalid_argument("blocked convolution: the output overlaps the input");
  const ConvGeometry& s = s_;
  const Window2d& win = s.win;
  const int64_t C = kernel_->lanes, F = kernel_->max_blocks, Ci = in_lanes_;
  const int64_t cout_g = s.cout_per_group();
  const bool copy = copies_input();
  const int64_t hp = padded_h(), wp = padded_w(), in_blocks = s.group * in_blocks_;
  const int64_t in_rows = in_blocks * hp, taps = win.kh * win.kw;
  const int64_t tiles = (out_blocks_ + F - 1) / F;  // of F output blocks, per group
  const int64_t bands = (s.out_h + band_rows_ - 1) / band_rows_, band = band_floats();
  const int64_t plane = s.out_h * s.out_w;
  // The team is at most the pieces of kept scratch there are, where it keeps any.
  int team_size = team(batch, threads);
  if (kept_floats() > 0 || private_copies(team_size)) team_size = std::min(team_size, std::max(own.threads(), 1));
  const bool by_rows = splits_rows(team_size), private_copy = private_copies(team_size);
  if (kept_floats_for(team_size) > 0) own.floats(0, kept_floats_for(team_size), "blocked convolution");
  if (!private_copy) require_workspace(workspace, input_floats() + flag_floats(padded_h()), "blocked convolution");
  const Activation activation = act;  // a local copy: stores to y cannot alias it
  // An NCHWc output starts from the residual (plus the bias) where it is summed in place;
  // an NCHW one adds it as it goes back to NCHW.
  const bool residual_first = residual && layouts_.output_blocked;
  // Unless a residual comes after the sums, the tiles apply the common activations on
  // their registers (applied to the band after, Relu was 7% of SqueezeNet's 3x3 layers).
  const bool in_registers =
      (!residual || residual_first) && activation.kind != ActivationKind::kNone && activation_in_registers(activation);
  for (int64_t n = 0; n < batch; ++n) {
    const float* xn = x + n * s.cin * s.h * s.w;
    float* yn = y + n * s.cout * plane;
    const float* rn = residual ? residual + n * s.cout * plane : nullptr;
    // The input the windows read: xn itself, the team's copy in the workspace or, where
    // the team splits rows, each thread's copy of its rows in its kept scratch.
    std::vector<PaddedInput> inputs;
    const auto copied = std::make_unique<std::atomic<bool>[]>(private_copy ? team_size : 0);
    if (private_copy) {
      for (int u = 0; u < team_size; ++u) {
        const auto [first, end] = share_input_rows(u, team_size);
        float* data = own.floats(u, kept_floats_for(team_size), "blocked convolution").data() + kept_floats();
        inputs.push_back(
            {data, data, reinterpret_cast<uint8_t*>(data + copy_floats(end - first)), first, end - first, &copied[u]});
      }
    } else {
      float* data = copy ? workspace.data() : nullptr;
      inputs.push_back({copy ? data : xn, data, reinterpret_cast<uint8_t*>(workspace.data() + input_floats()), 0, hp});
    }
    // Each item, F output blocks x a band of output rows, is summed one chunk of input
    // blocks (whose weights stay in L2) over all its rows at a time: in place in an NCHWc
    // output, else in the thread's band of NCHWc partial sums, then reordered into y.
    const bool one_run = taps == 1 && win.sh == 1 && win.sw == 1 && wp == s.out_w;
    // A team's threads read input another thread wrote, in the layer before (where it
    // is read as it is) or in the shared copy (a thread's own copy it wrote itself), so
    // each tile fetches the next one's: ResNet-50's 1024 -> 256 layers at 14x14 took
    // 0.83-0.86x the time on two threads, its 1x1 layers at 28x28 and 7x7 0.79-0.94x,
    // MobileNetV2/V3, EfficientNet-B0, GoogLeNet, RegNetX 0.95-0.97x the model's (Zen 5).
    // One thread fetches too where a chunk reads kManyInputBlocks or more input blocks of
    // an input past L2: more planes at once, from L3, than the hardware's prefetchers
    // follow.
    // Only where a pixel's block is a whole line (c = 16): the AVX2 tiles, half the sums
    // per line, took 1.02-1.04x the time with the fetches.
    const bool many_far_planes = chunk_blocks_ >= kManyInputBlocks && checked_mul({s.cin, s.h, s.w, 4}) > kL2Bytes;
    const bool prefetch_input =
        (team_size > 1 || many_far_planes) && !private_copy && C * sizeof(float) >= 64 && !reads_nchw();
    const auto sum_item = [&](const PaddedInput& in, float* thread_band, int64_t g, int64_t ob0, int64_t oy0,
                              int64_t rows) {
      const int blocks = static_cast<int>(std::min(F, out_blocks_ - ob0));
      const int64_t gob = g * out_blocks_ + ob0;
      // An NCHWc output's blocks are whole planes apart; the band's, its rows.
      const int64_t out_block = layouts_.output_blocked ? plane * C : rows * s.out_w * C;
      float* sums = layouts_.output_blocked ? yn + (gob * s.out_h + oy0) * s.out_w * C : thread_band;
      float init[4 * 16] = {};
      if (bias)
        for (int64_t i = 0; i < blocks * C; ++i)
          if (ob0 * C + i < cout_g) init[i] = bias[g * cout_g + ob0 * C + i];
      BlockedConvRow r;
      r.cin_lanes = Ci;
      r.x_block = in.rows * wp * Ci;
      r.x_row = wp * Ci;
      r.x_lane = reads_nchw() ? s.h * s.w : 1;
      r.w_block = in_blocks_ * taps * Ci * C;
      r.out_block = out_block;
      r.sw = win.sw;
      r.w_kw = win.kw;
      r.w_taps = taps;
      r.dh = win.dh;
      r.dw = win.dw;
      r.blocks = blocks;
      r.prefetch_input = prefetch_input;
      // The residual in the band (nothing to copy when the output is the residual's
      // buffer), which the first chunk's tiles start from, plus the bias.
      if (residual_first && rn != yn)
        for (int64_t f = 0; f < blocks; ++f) {
          float* o = sums + f * out_block;
          std::copy_n(rn + (o - yn), rows * s.out_w * C, o);
        }
      r.init_adds_out = residual_first;
      // The next tile's weights (the next item a thread takes, or the same tile's next
      // band), spread over this item's calls of the row kernel.
      const int64_t next = (gob + blocks) * r.w_block, tile_floats = tile_blocks() * r.w_block;
      const int64_t prefetch = tile_floats * 4 <= kPrefetchTileBytes
                                   ? std::clamp<int64_t>(packed_weight_floats() - next, 0, tile_floats)
                                   : 0;
      const int64_t calls = (in_blocks_ + chunk_blocks_ - 1) / chunk_blocks_ * (one_run ? 1 : rows);
      int64_t call = 0;
      for (int64_t cb0 = 0; cb0 < in_blocks_; cb0 += chunk_blocks_) {
        r.cin_blocks = std::min(chunk_blocks_, in_blocks_ - cb0);
        r.w = packed + ((gob * in_blocks_ + cb0) * taps) * Ci * C;
        r.init = cb0 == 0 ? init : nullptr;
        r.activation = in_registers && cb0 + chunk_blocks_ >= in_blocks_ ? &activation : nullptr;
        // A band of a 1x1 stride-1 window over an unpadded input is one run of pixels, in
        // the input as in the sums: summed as one row, its tiles all of the widest width
        // (a 7x7 plane in 6-pixel tiles rather than a 7-pixel one per row: conv_bench's
        // 7x7 1x1 layers 0.75-0.87x the time on Zen 5, AVX-512 and AVX2; 13x13 and 14x14
        // 0.89-0.96x).
        const int64_t runs = one_run ? 1 : rows;
        r.out_w = one_run ? rows * s.out_w : s.out_w;
        const float* w = r.w;
        for (int64_t oy = oy0; oy < oy0 + runs; ++oy) {
          // Only the window rows that read the image, not its padding: DeepLabV3's
          // dilation-12 3x3 layer on a 14x14 map reads one row of three for most outputs.
          const auto [ky0, ky1] = one_run ? std::pair<int64_t, int64_t>{0, 1} : image_rows(oy);
          r.kh = ky1 - ky0;
          const float* x_row = in.data + row_at(in, g * in_blocks_ + cb0, oy * win.sh + ky0 * win.dh);
          const float* w_row = w + ky0 * win.kw * Ci * C;
          float* out_row = sums + (oy - oy0) * s.out_w * C;
          r.prefetch = prefetch > 0 ? packed + next + prefetch * call / calls : nullptr;
          r.prefetch_floats = prefetch * (call + 1) / calls - prefetch * call / calls;
          ++call;
          if (segments_.empty()) {
            r.kw = win.kw;
            r.x = x_row;
            r.w = w_row;
            r.out = out_row;
            kernel_->run_row(r);
            continue;
          }
          for (const ColumnSegment& c : segments_) {
            r.out_w = c.ox1 - c.ox0;
            r.kw = c.kx1 - c.kx0;
            r.x = x_row + (c.ox0 * win.sw + c.kx0 * win.dw) * Ci;
            r.w = w_row + c.kx0 * Ci * C;
            r.out = out_row + c.ox0 * C;
            kernel_->run_row(r);
            r.prefetch_floats = 0;  // fetched by the row's first segment
          }
        }
      }
      if (layouts_.output_blocked) {  // the other activations on the band while it is in cache
        if (!in_registers)
          for (int64_t f = 0; f < blocks; ++f) activation.apply(sums + f * out_block, rows * s.out_w * C);
        return;
      }
      store_band(sums, out_block, g, ob0, blocks, oy0, rows, yn, rn, activation, in_registers);
    };
    // Each thread's rows (by rows: [row0[t], row0[t + 1]), whose input rows it copies) and
    // share of the items. By rows, thread t's items are its rows' bands x every tile of
    // output blocks; else bands x tiles in even shares; Winograd, winograd_share's. A
    // thread that takes another's items reads that thread's copy.
    std::vector<int64_t> row0, item0;
    if (winograd()) {
      item0.assign(team_size + 1, 0);
      for (int t = 0; t < team_size; ++t) {
        const WinogradShare share = winograd_share(t, team_size);
        item0[t + 1] = item0[t] + (share.band1 - share.band0) * (share.chunk1 - share.chunk0);
      }
    } else if (by_rows) {
      row0.resize(team_size + 1);
      item0.resize(team_size + 1);
      for (int t = 0; t <= team_size; ++t) {
        row0[t] = share_first_row(t, team_size);
        item0[t] = t == 0 ? 0 : item0[t - 1] + s.group * tiles * own_bands(row0[t] - row0[t - 1]);
      }
    }
    WorkShares shares = item0.empty() ? WorkShares(s.group * tiles * bands, team_size) : WorkShares(item0);
#pragma omp parallel num_threads(team_size) if (team_size > 1)
    {
      const int t = omp_get_thread_num(), started = omp_get_num_threads();
      float* thread_band = band > 0 ? own.floats(t, band, "blocked convolution").data() : nullptr;
      // The NCHWc input with a zero border and zero lanes past the group's channels: NCHW
      // rows transposed, NCHWc rows copied, each row's flag set where it holds a NaN or an
      // infinity (Winograd).
      const auto copy_row = [&](const PaddedInput& in, int64_t gb, int64_t py) {
        const bool nonfinite = copy_input_row(gb, py, xn, in.copy + row_at(in, gb, py));
        if (winograd()) in.flags[flag_at(in, gb, py)] = nonfinite;
      };
      if (private_copy) {
        // Thread u's copy, in its kept scratch: the rows its windows read (a few rows of
        // the next thread's too). Written where it stays, in the cache of the thread that
        // reads it: the team's copy in the shared workspace took ResNet-18's 3x3 layers
        // twice as long per byte on two threads as on one. A thread copies for those of
        // the team that did not start.
        for (int u = t; u < team_size; u += started) {
          for (int64_t gb = 0; gb < in_blocks; ++gb)
            for (int64_t py = inputs[u].first_row; py < inputs[u].first_row + inputs[u].rows; ++py)
              copy_row(inputs[u], gb, py);
          copied[u].store(true, std::memory_order_release);
        }
      } else if (copy) {
#pragma omp for schedule(static)
        for (int64_t row = 0; row < in_rows; ++row) copy_row(inputs[0], row / hp, row % hp);
      }
      if (winograd())
        winograd_items(inputs, item0, weights, bias, activation, in_registers, yn, rn, own, team_size, shares);
      for (int64_t item; !winograd() && (item = shares.take(t)) >= 0;) {
        if (by_rows) {
          // Thread u's rows in bands of near-equal size, every tile of output blocks.
          const int u = static_cast<int>(std::upper_bound(item0.begin(), item0.end(), item) - item0.begin()) - 1;
          const int64_t own = row0[u + 1] - row0[u], n_bands = own_bands(own), j = item - item0[u];
          const int64_t gt = j / n_bands, b = j % n_bands;
          const int64_t oy0 = row0[u] + own * b / n_bands, oy1 = row0[u] + own * (b + 1) / n_bands;
          sum_item(inputs[private_copy ? u : 0].ready(), thread_band, gt / tiles, gt % tiles * F, oy0, oy1 - oy0);
        } else {
          const int64_t b = item % bands, gt = item / bands;
          const int64_t oy0 = b * band_rows_;
          sum_item(inputs[0], thread_band, gt / tiles, gt % tiles * F, oy0, std::min(band_rows_, s.out_h - oy0));
        }
      }
    }
  }
}

}  // namespace minfer::kernels
