#include "ops/kernels/blocked_conv.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "ops/kernels/threads.h"
#include "ops/kernels/transpose.h"
#include "ops/kernels/workspace.h"

namespace minfer::kernels {
namespace {

// The packed weights one pass over the output reads per tile of output blocks are kept
// under this (L2 is 1 MiB per core on the machines measured; the input rows and the
// partial sums share it).
constexpr int64_t kWeightChunkBytes = 256 * 1024;
// A thread's partial sums (F output blocks x a band of output rows) are kept under this
// many floats (64 KiB), in L2 beside the weights.
constexpr int64_t kBandFloats = 16 * 1024;

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
  return s.group == 1 || (s.cin_per_group() % k->lanes == 0 && s.cout_per_group() % k->lanes == 0);
}

BlockedConv::BlockedConv(const ConvGeometry& s, const float* weights, Isa isa, BlockedLayouts layouts)
    : s_(s), layouts_(layouts), kernel_(blocked_conv_kernel(isa)) {
  const int64_t C = kernel_->lanes, cin_g = s.cin_per_group(), cout_g = s.cout_per_group();
  const int64_t taps = s.win.kh * s.win.kw;
  in_lanes_ = cin_g < C ? cin_g : C;
  in_blocks_ = blocks_of(cin_g, in_lanes_);
  out_blocks_ = blocks_of(cout_g, C);
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
  return !layouts_.input_blocked || w.pad_top + w.pad_bottom + w.pad_left + w.pad_right > 0;
}

int64_t BlockedConv::input_floats() const {
  if (!copies_input()) return 0;
  const Window2d& w = s_.win;
  return checked_mul(
      {s_.group, in_blocks_, in_lanes_, s_.h + w.pad_top + w.pad_bottom, s_.w + w.pad_left + w.pad_right});
}

int64_t BlockedConv::band_floats() const {
  if (layouts_.output_blocked) return 0;
  return checked_mul({tile_blocks(), kernel_->lanes, band_rows_, s_.out_w});
}

int BlockedConv::team(int64_t batch, int threads) const {
  const int64_t macs = checked_mul({batch, s_.cout, s_.out_h, s_.out_w, s_.cin_per_group(), s_.win.kh, s_.win.kw});
  return threads_worth_starting(macs, items(), threads, Work::kDense);
}

int64_t BlockedConv::items() const {
  const int64_t tiles = (out_blocks_ + kernel_->max_blocks - 1) / kernel_->max_blocks;
  return s_.group * tiles * ((s_.out_h + band_rows_ - 1) / band_rows_);
}

int64_t BlockedConv::workspace_floats(int64_t batch, int threads) const {
  return input_floats() + team(batch, threads) * band_floats();
}

void BlockedConv::run(int64_t batch, const float* x, const float* bias, const Activation& act, float* y,
                      std::span<float> workspace, int threads, const float* residual) const {
  const ConvGeometry& s = s_;
  const Window2d& win = s.win;
  const int64_t C = kernel_->lanes, F = kernel_->max_blocks, Ci = in_lanes_;
  const int64_t cin_g = s.cin_per_group(), cout_g = s.cout_per_group();
  const bool copy = copies_input();
  const int64_t hp = copy ? s.h + win.pad_top + win.pad_bottom : s.h;
  const int64_t wp = copy ? s.w + win.pad_left + win.pad_right : s.w;
  const int64_t in_rows = s.group * in_blocks_ * hp, taps = win.kh * win.kw;
  const int64_t tiles = (out_blocks_ + F - 1) / F;  // of F output blocks, per group
  const int64_t bands = (s.out_h + band_rows_ - 1) / band_rows_, band = band_floats();
  const int64_t plane = s.out_h * s.out_w;
  require_workspace(workspace, input_floats() + band, "blocked convolution");  // one thread's share, at least
  int team_size = team(batch, threads);
  if (band > 0)
    team_size = static_cast<int>(
        std::min<int64_t>(team_size, (static_cast<int64_t>(workspace.size()) - input_floats()) / band));
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
    const float* in_c = copy ? workspace.data() : xn;
#pragma omp parallel num_threads(team_size) if (team_size > 1)
    {
      // The NCHWc input with a zero border and zero lanes past the group's channels:
      // NCHW rows transposed, NCHWc rows copied.
      if (copy) {
        float* padded = workspace.data();
#pragma omp for schedule(static)
        for (int64_t row = 0; row < in_rows; ++row) {
          const int64_t gb = row / hp, iy = row % hp - win.pad_top;
          const int64_t g = gb / in_blocks_, ib = gb % in_blocks_;
          float* dst = padded + row * wp * Ci;
          if (iy < 0 || iy >= s.h) {
            std::fill_n(dst, wp * Ci, 0.0f);
            continue;
          }
          std::fill_n(dst, win.pad_left * Ci, 0.0f);
          std::fill_n(dst + (win.pad_left + s.w) * Ci, win.pad_right * Ci, 0.0f);
          float* interior = dst + win.pad_left * Ci;
          if (layouts_.input_blocked) {
            std::copy_n(xn + (gb * s.h + iy) * s.w * C, s.w * C, interior);
            continue;
          }
          const int64_t lanes = std::min(Ci, cin_g - ib * Ci);
          transpose(xn + ((g * cin_g + ib * Ci) * s.h + iy) * s.w, s.h * s.w, lanes, s.w, interior, Ci);
          for (int64_t lane = lanes; lane < Ci; ++lane)
            for (int64_t ix = 0; ix < s.w; ++ix) interior[ix * Ci + lane] = 0.0f;
        }
      }
      // Each item, F output blocks x a band of output rows, is summed one chunk of input
      // blocks (whose weights stay in L2) over all its rows at a time: in place in an
      // NCHWc output, else in the thread's band of NCHWc partial sums, then reordered
      // into y.
      float* scratch = copy ? workspace.data() + input_floats() : workspace.data();
      float* thread_band = scratch + omp_get_thread_num() * band;
#pragma omp for schedule(static)
      for (int64_t item = 0; item < s.group * tiles * bands; ++item) {
        const int64_t b = item % bands, gt = item / bands, g = gt / tiles, ob0 = gt % tiles * F;
        const int64_t oy0 = b * band_rows_, rows = std::min(band_rows_, s.out_h - oy0);
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
        r.x_block = hp * wp * Ci;
        r.x_row = wp * Ci;
        r.w_block = in_blocks_ * taps * Ci * C;
        r.out_block = out_block;
        r.out_w = s.out_w;
        r.sw = win.sw;
        r.kh = win.kh;
        r.kw = win.kw;
        r.dh = win.dh;
        r.dw = win.dw;
        r.blocks = blocks;
        // The residual in the band (nothing to copy when the output is the residual's
        // buffer), which the first chunk's tiles start from, plus the bias.
        if (residual_first && rn != yn)
          for (int64_t f = 0; f < blocks; ++f) {
            float* o = sums + f * out_block;
            std::copy_n(rn + (o - yn), rows * s.out_w * C, o);
          }
        r.init_adds_out = residual_first;
        for (int64_t cb0 = 0; cb0 < in_blocks_; cb0 += chunk_blocks_) {
          r.cin_blocks = std::min(chunk_blocks_, in_blocks_ - cb0);
          r.w = weights_.data() + ((gob * in_blocks_ + cb0) * taps) * Ci * C;
          r.init = cb0 == 0 ? init : nullptr;
          r.activation = in_registers && cb0 + chunk_blocks_ >= in_blocks_ ? &activation : nullptr;
          for (int64_t oy = oy0; oy < oy0 + rows; ++oy) {
            r.x = in_c + (((g * in_blocks_ + cb0) * hp + oy * win.sh) * wp) * Ci;
            r.out = sums + (oy - oy0) * s.out_w * C;
            kernel_->run_row(r);
          }
        }
        if (layouts_.output_blocked) {  // the other activations on the band while it is in cache
          if (!in_registers)
            for (int64_t f = 0; f < blocks; ++f) activation.apply(sums + f * out_block, rows * s.out_w * C);
          continue;
        }
        // The other activations on the band while it is in L1, then NCHWc -> NCHW; with
        // a residual, summed as it goes (each residual element read before the output
        // element at its place is written: the output may be the residual's buffer), then
        // the activation on each written row.
        if (!rn && !in_registers && activation.kind != ActivationKind::kNone)
          activation.apply(sums, blocks * out_block);
        for (int64_t f = 0; f < blocks && (ob0 + f) * C < cout_g; ++f) {
          const int64_t lanes = std::min(C, cout_g - (ob0 + f) * C);
          const int64_t at = ((g * cout_g + (ob0 + f) * C) * s.out_h + oy0) * s.out_w;
          transpose(sums + f * out_block, C, rows * s.out_w, lanes, yn + at, plane, rn ? rn + at : nullptr);
          if (rn && activation.kind != ActivationKind::kNone)
            for (int64_t c = 0; c < lanes; ++c) activation.apply(yn + at + c * plane, rows * s.out_w);
        }
      }
    }
  }
}

}  // namespace minfer::kernels
