#include "ops/kernels/depthwise_conv.h"

#include <omp.h>

#include <algorithm>
#include <stdexcept>

#include "ops/blocked_layout.h"
#include "ops/kernels/padded_rows.h"
#include "ops/kernels/threads.h"
#include "ops/kernels/workspace.h"

namespace minfer::kernels {
namespace {

// The bytes of a channels-in-lanes band's input and output tiles: the budget that makes
// a large plane run in bands, so that a band's tiles are still in L2 when it transposes
// them (see docs/performance.md).
constexpr int64_t kLaneBandBytes = int64_t{64} << 10;

// Floats of one thread's scratch: the padded plane a per-plane run fills (the
// (out_h - 1) * stride + k rows the windows cover, each of `stride` phases), or a
// channels-in-lanes band's input tile, output tile and weights.
int64_t scratch_floats(const DepthwiseKernel& k, const ConvGeometry& s) {
  if (k.channels_in_lanes) {
    const LaneLayout lay = lane_layout(s, k.lanes);
    const int64_t slots = checked_add({checked_mul({lay.band_rows, s.out_w}), k.lanes});
    return whole_lines(
        checked_add({int64_t{k.kernel_size} * k.kernel_size * k.lanes, 2 * slots, lay.tile_floats(k.lanes)}));
  }
  const int64_t phase_len = padded_phase_len(s.out_w, k.lanes, k.kernel_size, 1, k.stride);
  return whole_lines(
      checked_mul({checked_add({checked_mul({s.out_h - 1, k.stride}), k.kernel_size}), k.stride, phase_len}));
}

// The work items run() takes: planes, or bands of channel groups.
int64_t work_items(const DepthwiseKernel& k, const ConvGeometry& s, int64_t batch) {
  if (!k.channels_in_lanes) return checked_mul({batch, s.cin});
  const LaneLayout lay = lane_layout(s, k.lanes);
  return checked_mul({batch, lay.groups, lay.bands});
}

int threads_for(const DepthwiseKernel& k, const ConvGeometry& s, int64_t batch, int threads) {
  const int64_t macs = checked_mul({batch, s.cout, s.out_h, s.out_w, s.win.kh, s.win.kw});
  return threads_worth_starting(macs, work_items(k, s, batch), threads, Work::kStreaming);
}

}  // namespace

std::span<const DepthwiseKernel> depthwise_kernels(Isa isa) {
  return per_isa<std::span<const DepthwiseKernel>>(isa, depthwise_kernels_scalar, depthwise_kernels_avx2,
                                                   depthwise_kernels_avx512);
}

LaneLayout lane_layout(const ConvGeometry& s, int64_t lanes) {
  const int64_t k = (s.win.kh - 1) * s.win.dh + 1, stride = s.win.sh;  // the window's extent
  LaneLayout lay;
  // Wide enough for every window and for every input column (a right pad below zero
  // leaves columns no window reads: they are copied and never used).
  lay.pitch = std::max((s.out_w - 1) * stride + k, s.win.pad_left + s.w);
  const auto band_bytes = [&](int64_t rows) { return 4 * lanes * ((rows - 1) * stride + k) * lay.pitch; };
  lay.band_rows = s.out_h;
  while (lay.band_rows > 1 && band_bytes(lay.band_rows) > kLaneBandBytes) lay.band_rows = (lay.band_rows + 1) / 2;
  lay.bands = (s.out_h + lay.band_rows - 1) / lay.band_rows;
  lay.tile_rows = (lay.band_rows - 1) * stride + k;
  lay.groups = (s.cin + lanes - 1) / lanes;
  return lay;
}

// Measured with bench/conv_bench.cc on every MobileNet and EfficientNet-B0 layer (Zen 4,
// one thread; docs/performance.md): channels in lanes won everywhere (0.2-0.9x the
// per-plane time) except on 3x3 stride-1 planes wide enough to fill the per-plane
// kernel's vectors, where the transposes cost more than the idle lanes: 112 wide on
// both targets (1.3-1.4x), 56 wide with 8 lanes (1.0-1.3x; 0.8-0.9x with 16).
bool depthwise_prefers_lanes(const ConvGeometry& s, int lanes) {
  const bool wide = s.out_w >= (lanes >= 16 ? 112 : 56);
  return !(s.win.kh == 3 && s.win.sh == 1 && wide);
}

const DepthwiseKernel* find_depthwise_kernel(const ConvGeometry& s, Isa isa, BlockedLayouts layouts) {
  const Window2d& w = s.win;
  if (s.group != s.cin || s.cout != s.cin || w.kh != w.kw || w.sh != w.sw || w.dh != w.dw) return nullptr;
  if (!isa_runnable(isa)) return nullptr;
  const DepthwiseKernel* found = nullptr;
  for (const DepthwiseKernel& k : depthwise_kernels(isa)) {
    if (k.kernel_size != w.kh || k.stride != w.sh || (w.dh != 1 && !k.channels_in_lanes)) continue;
    if (layouts.any()) {
      if (k.channels_in_lanes && k.lanes == blocked_lanes(isa) && s.cin % k.lanes == 0) return &k;
    } else if (!found || k.channels_in_lanes == depthwise_prefers_lanes(s, k.lanes)) {
      found = &k;
    }
  }
  return layouts.any() ? nullptr : found;
}

int64_t depthwise_thread_floats(const DepthwiseKernel& k, const ConvGeometry& s) {
  return scratch_floats(k, s);
}

void depthwise_conv2d(const DepthwiseKernel& k, const ConvGeometry& s, int64_t batch, const float* x,
                      const float* weights, const float* bias, float* y, const ThreadScratch& own, int threads,
                      const Activation& act, BlockedLayouts layouts) {
  if (layouts.any() && !k.channels_in_lanes)
    throw std::invalid_argument("depthwise_conv2d: NCHWc tensors need a channels-in-lanes kernel");
  const int64_t items = work_items(k, s, batch);
  const int64_t scratch = scratch_floats(k, s);
  own.floats(0, scratch, "depthwise convolution");  // one thread's, at least
  const int team = std::min(threads_for(k, s, batch, threads), own.threads());
  const DepthwiseJob job{&s, x, weights, bias, &act, y, layouts};
  // Each thread a contiguous run of items, fixed by the team size alone.
#pragma omp parallel num_threads(team) if (team > 1)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    k.run(job, items * t / n, items * (t + 1) / n, own.floats(t, scratch, "depthwise convolution").data());
  }
}

}  // namespace minfer::kernels
