#include "ops/kernels/direct_conv.h"

#include <omp.h>

#include <algorithm>

#include "ops/kernels/padded_rows.h"
#include "ops/kernels/threads.h"
#include "ops/kernels/work_shares.h"
#include "ops/kernels/workspace.h"
#include "profiler/cpu_info.h"

namespace minfer::kernels {
namespace {

// Floats of the padded input rows a band of `rows` output rows reads: each channel's
// direct_conv_band_input_rows of `stride` phases. Checked: a stride far beyond the input
// makes a row long (compile refuses what does not fit instead of a wrapped size reaching
// the kernel).
int64_t band_scratch_floats(const DirectConvKernel& k, const ConvGeometry& s, int64_t rows) {
  const Window2d& w = s.win;
  return checked_mul(
      {s.cin, direct_conv_band_input_rows(s, rows), w.sw, padded_phase_len(s.out_w, k.lanes, w.kw, w.dw, w.sw)});
}

// The padded rows of a band of output rows stay in L2 (under this many bytes) while each
// block of output channels passes over the band: every output plane is then written in
// runs of `band` rows, not a row at a time across all the planes. At least two bands per
// image, so that two threads share even a short one.
constexpr int64_t kBandBytes = int64_t{96} << 10;
constexpr int64_t kMaxBandRows = 8;

int64_t band_rows(const DirectConvKernel& k, const ConvGeometry& s) {
  int64_t band = std::min(kMaxBandRows, (s.out_h + 1) / 2);
  while (band > 1 && band_scratch_floats(k, s, band) > kBandBytes / 4) --band;
  return std::max<int64_t>(band, 1);
}

int64_t scratch_floats(const DirectConvKernel& k, const ConvGeometry& s) {
  return whole_lines(band_scratch_floats(k, s, band_rows(k, s)));
}

int64_t bands_per_image(const DirectConvKernel& k, const ConvGeometry& s) {
  const int64_t band = band_rows(k, s);
  return (s.out_h + band - 1) / band;
}

int threads_for(const DirectConvKernel& k, const ConvGeometry& s, int64_t batch, int threads) {
  const int64_t macs = checked_mul({batch, s.cout, s.out_h, s.out_w, s.cin, s.win.kh, s.win.kw});
  return threads_worth_starting(macs, batch * bands_per_image(k, s), threads, Work::kStreaming);
}

}  // namespace

const DirectConvKernel* direct_conv_kernel(Isa isa, int fma_units_512) {
  if (!isa_runnable(isa)) return nullptr;
  return per_isa<const DirectConvKernel*>(
      isa, &direct_conv_f32_4x4_scalar, &direct_conv_f32_4x24_avx2,
      fma_units_512 >= 2 ? &direct_conv_f32_8x48_avx512 : &direct_conv_f32_4x48_avx512);
}

const DirectConvKernel* direct_conv_kernel(Isa isa) {
  return direct_conv_kernel(isa, cpu_info().fma_units(512));
}

std::vector<const DirectConvKernel*> direct_conv_kernels(Isa isa) {
  if (!isa_runnable(isa)) return {};
  if (isa == Isa::kAvx512) return {&direct_conv_f32_4x48_avx512, &direct_conv_f32_8x48_avx512};
  return {direct_conv_kernel(isa)};
}

const DirectConvKernel* find_direct_conv_kernel(const ConvGeometry& s, Isa isa) {
  const DirectConvKernel* k = direct_conv_kernel(isa);
  if (!k || s.group != 1 || s.cin * s.win.kh * s.win.kw > kDirectConvMaxTaps) return nullptr;
  // Not past a stride wider than the window: the band's rows would hold every phase.
  const Window2d& w = s.win;
  const bool few_outputs =
      s.cout < k->lanes && w.kh * w.kw > 1 && w.sh <= (w.kh - 1) * w.dh + 1 && w.sw <= (w.kw - 1) * w.dw + 1;
  return s.cin <= kDirectConvMaxCin || few_outputs ? k : nullptr;
}

int64_t direct_conv_thread_floats(const DirectConvKernel& k, const ConvGeometry& s) {
  return scratch_floats(k, s);
}

void direct_conv2d(const DirectConvKernel& k, const ConvGeometry& s, int64_t batch, const float* x,
                   const float* weights, const float* bias, float* y, const ThreadScratch& own, int threads,
                   const Activation& act) {
  const int64_t band = band_rows(k, s), bands = bands_per_image(k, s), items = batch * bands;
  const int64_t in_image = s.cin * s.h * s.w, out_image = s.cout * s.out_h * s.out_w;
  const int64_t scratch = scratch_floats(k, s);
  own.floats(0, scratch, "direct convolution");  // one thread's, at least
  const int team = std::min(threads_for(k, s, batch, threads), own.threads());
  // Bands of output rows, each thread its own share first, then the others' (work_shares.h).
  WorkShares shares(items, team);
#pragma omp parallel num_threads(team) if (team > 1)
  for (int64_t i; (i = shares.take(omp_get_thread_num())) >= 0;) {
    const int64_t n = i / bands, oy = i % bands * band;
    k.run_rows({&s, x + n * in_image, weights, bias, &act, y + n * out_image, oy, std::min(band, s.out_h - oy),
                own.floats(omp_get_thread_num(), scratch, "direct convolution").data()});
  }
}

}  // namespace minfer::kernels
