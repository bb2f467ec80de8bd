#include "ops/kernels/conv_gemm.h"

#include <omp.h>

#include <algorithm>
#include <stdexcept>

#include "ops/kernels/padded_rows.h"
#include "ops/kernels/threads.h"

namespace minfer::kernels {
namespace {

// What the im2col packer reads: one group's input channels of one image.
struct Im2colSource {
  const ConvGeometry* shape;
  const float* x;  // [cin / group, h, w]
};

// B[p, j] = x[c, oy * sh - pad_top + ky * dh, ox * sw - pad_left + kx * dw] (0 in the
// padding) for p = (c, ky, kx) and j = (oy, ox): rows [k0, k0 + kb) and columns
// [j0, j0 + cols) written as one nr-wide panel per k. Columns are walked in runs along one
// output row, so a unit-stride row is one bounds computation and a contiguous copy.
void pack_im2col_panel(const void* source, int64_t k0, int64_t kb, int64_t j0, int64_t cols, int nr, float* dst) {
  const auto& src = *static_cast<const Im2colSource*>(source);
  const ConvGeometry& s = *src.shape;
  const Window2d& w = s.win;
  const int64_t taps = w.kh * w.kw;
  for (int64_t p = k0; p < k0 + kb; ++p, dst += nr) {
    const int64_t c = p / taps, ky = p % taps / w.kw, kx = p % w.kw;
    const float* plane = src.x + c * s.h * s.w;
    const int64_t x_off = kx * w.dw - w.pad_left;
    int64_t oy = j0 / s.out_w, ox = j0 % s.out_w;
    int64_t q = 0;
    while (q < cols) {
      const int64_t run = std::min(cols - q, s.out_w - ox);
      float* d = dst + q;
      const int64_t iy = oy * w.sh - w.pad_top + ky * w.dh;
      if (iy < 0 || iy >= s.h) {
        std::fill(d, d + run, 0.0f);
      } else {
        const float* row = plane + iy * s.w;
        const int64_t ix0 = ox * w.sw + x_off;
        // The run's columns as phase 0 of a row padded by -ix0: [lo, hi) read the row.
        const PhaseColumns in = phase_columns(s.w, -ix0, w.sw, 0, run);
        std::fill(d, d + in.lo, 0.0f);
        copy_phase(row, -ix0, w.sw, 0, in, d);
        std::fill(d + in.hi, d + run, 0.0f);
      }
      q += run;
      ox = 0;
      ++oy;
    }
    std::fill(dst + cols, dst + nr, 0.0f);
  }
}

// What the scaling packer reads: a pointwise GEMM's B (rows ld floats apart) and each
// row's factor.
struct ScaledRows {
  const float* x;
  int64_t ld;
  const float* scale;
};

// B[p, j] = x[p, j] * scale[p], as pack_b_block packs a plain B (nr-wide panels per k,
// zero past column j0 + cols): the channel scale fused in by fuse_channel_scale.
void pack_scaled_panel(const void* source, int64_t k0, int64_t kb, int64_t j0, int64_t cols, int nr, float* dst) {
  const auto& src = *static_cast<const ScaledRows*>(source);
  for (int64_t q = 0; q < cols; q += nr, dst += kb * nr) {
    const int64_t width = std::min<int64_t>(nr, cols - q);
    for (int64_t p = 0; p < kb; ++p) {
      const float f = src.scale[k0 + p];
      const float* row = src.x + (k0 + p) * src.ld + j0 + q;
      float* d = dst + p * nr;
      for (int64_t c = 0; c < width; ++c) d[c] = row[c] * f;
      std::fill(d + width, d + nr, 0.0f);
    }
  }
}

}  // namespace

namespace {

bool unpadded_1x1(const ConvGeometry& s) {
  const Window2d& w = s.win;
  return w.kh == 1 && w.kw == 1 && w.pad_top == 0 && w.pad_left == 0 && w.pad_bottom == 0 && w.pad_right == 0;
}

int64_t subsampled_floats_of(const ConvGeometry& s) {
  return is_strided_pointwise(s) ? s.cin * s.out_h * s.out_w : 0;
}

}  // namespace

void subsample_pointwise_input(const ConvGeometry& s, const float* x, float* dst, int threads) {
  const int team = threads_worth_starting(s.cin * s.out_h * s.out_w, s.cin, threads, Work::kStreaming);
  const int64_t pixels = s.out_h * s.out_w;
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
  for (int64_t c = 0; c < s.cin; ++c) subsample_pointwise_pixels(s, x + c * s.h * s.w, dst + c * pixels, 1, 0, pixels);
}

void subsample_pointwise_pixels(const ConvGeometry& s, const float* x, float* dst, int64_t channels, int64_t p0,
                                int64_t p1) {
  const int64_t plane = s.h * s.w, pixels = s.out_h * s.out_w;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t p = p0; p < p1;) {
      const int64_t oy = p / s.out_w, ox0 = p % s.out_w, n = std::min(s.out_w - ox0, p1 - p);
      const float* row = x + c * plane + oy * s.win.sh * s.w + ox0 * s.win.sw;
      float* d = dst + c * pixels + p;
      // Stride 2 apart: with a constant stride GCC vectorises the gather (even lanes of
      // pairs of loads), which keeps more of the rows' cache lines in flight.
      if (s.win.sw == 2)
        for (int64_t i = 0; i < n; ++i) d[i] = row[i * 2];
      else
        for (int64_t i = 0; i < n; ++i) d[i] = row[i * s.win.sw];
      p += n;
    }
}

bool is_pointwise(const ConvGeometry& s) {
  return unpadded_1x1(s) && s.win.sh == 1 && s.win.sw == 1;
}

bool is_strided_pointwise(const ConvGeometry& s) {
  return unpadded_1x1(s) && (s.win.sh > 1 || s.win.sw > 1);
}

int64_t ConvGemm::subsampled_floats() const {
  return subsampled_floats_of(shape_);
}

namespace {

// Vector multiply-add steps per k of a [rows, cols] product on the kernel's tiles: rows
// broadcast (a short last tile runs no faster than two rows: the FMA latency), columns
// in vectors of nr / 2 (the tiles are two vectors wide).
int64_t tile_steps(int64_t rows, int64_t cols, const GemmKernel& kernel) {
  const int64_t width = kernel.nr / 2, rest = rows % kernel.mr;
  return (cols + width - 1) / width * (rows - rest + (rest ? std::max<int64_t>(rest, 2) : 0));
}

}  // namespace

bool pointwise_pixels_as_rows(const ConvGeometry& s, const GemmKernel& kernel) {
  if (!unpadded_1x1(s)) return false;
  const int64_t pixels = s.out_h * s.out_w, channels = s.cout_per_group();
  // The transposed store costs a 4x4-block transpose of every tile: it must save more than a tenth.
  return 11 * tile_steps(pixels, channels, kernel) < 10 * tile_steps(channels, pixels, kernel);
}

ConvGemm::ConvGemm(const ConvGeometry& s, const float* constant_weights, Isa isa)
    : shape_(s), pointwise_(unpadded_1x1(s)), kernel_(&gemm_kernel(isa)) {
  if (!constant_weights) return;
  pixels_as_rows_ = pointwise_pixels_as_rows(s, *kernel_);
  // Pixels as rows: one k-block, so the transposed C is never read back (GemmEpilogue::transposed_c).
  for (int64_t g = 0; g < s.group; ++g) {
    const float* wg = constant_weights + g * m() * k();
    packed_.push_back(pixels_as_rows_ ? PackedMatrix::pack_b(*kernel_, wg, k(), true, k(), m(), k())
                                      : PackedMatrix::pack_a(*kernel_, wg, k(), false, m(), k()));
  }
}

namespace {

// Threads that each run whole groups' GEMMs (one thread per GEMM), or 1: then the groups
// run one after the other, each GEMM split over the threads. Groups are independent, so
// a grouped convolution whose groups are too small to split (RegNet's, 16 channels wide)
// still keeps every thread busy.
int group_threads(const ConvGeometry& s, int64_t m, int64_t n, int64_t k, int threads) {
  if (s.group < 2 || threads < 2) return 1;
  return threads_worth_starting(s.group * m * n * k, s.group, threads, Work::kDense);
}

int64_t gemm_floats(const GemmKernel& kernel, int64_t m, int64_t n, int64_t k, int threads, bool weights_prepacked,
                    bool pixels_as_rows) {
  if (pixels_as_rows) return gemm_workspace_bytes(kernel, n, m, k, threads, GemmPacked::kB, k) / 4;
  return gemm_workspace_bytes(kernel, m, n, k, threads, weights_prepacked ? GemmPacked::kA : GemmPacked::kNone) / 4;
}

}  // namespace

int64_t conv_gemm_workspace_floats(const ConvGeometry& s, const GemmKernel& kernel, bool weights_prepacked,
                                   int threads) {
  const int64_t m = s.cout_per_group(), n = s.out_h * s.out_w, k = s.cin_per_group() * s.win.kh * s.win.kw;
  const int team = group_threads(s, m, n, k, threads);
  const bool rows = weights_prepacked && pointwise_pixels_as_rows(s, kernel);
  const int64_t gemm = team > 1 ? team * gemm_floats(kernel, m, n, k, 1, weights_prepacked, rows)
                                : gemm_floats(kernel, m, n, k, threads, weights_prepacked, rows);
  return gemm + subsampled_floats_of(s);
}

void ConvGemm::run(int64_t batch, const float* x, const float* weights, const float* bias, const Activation& act,
                   float* y, std::span<float> workspace, int threads, const float* residual, const float* scale) const {
  const ConvGeometry& s = shape_;
  if (scale && (!pointwise_ || pixels_as_rows_))
    throw std::invalid_argument("ConvGemm: an input scale needs a pointwise GEMM with the pixels along the vectors");
  const int64_t in_image = s.cin * s.h * s.w, out_image = s.cout * n();
  // A strided pointwise convolution reads its subsampled image, at the workspace's end.
  const int64_t sub = subsampled_floats();
  if (static_cast<int64_t>(workspace.size()) < sub)
    throw std::invalid_argument("ConvGemm: workspace smaller than conv_gemm_workspace_floats()");
  float* const sub_x = workspace.data() + workspace.size() - sub;
  const std::span<float> gemm_workspace = workspace.first(workspace.size() - static_cast<size_t>(sub));
  const int64_t in_group = s.cin_per_group() * (sub ? n() : s.h * s.w);
  const int team = group_threads(s, m(), n(), k(), threads);
  const int64_t team_floats = team > 1 ? gemm_floats(*kernel_, m(), n(), k(), 1, prepacked(), pixels_as_rows_) : 0;
  if (team > 1 && static_cast<int64_t>(gemm_workspace.size()) < team * team_floats)
    throw std::invalid_argument("ConvGemm: workspace smaller than conv_gemm_workspace_floats()");
  auto run_group = [&](const float* xb, int64_t b, int64_t g) {
    std::span<float> scratch = gemm_workspace;
    int gemm_threads = threads;
    if (team > 1) {
      scratch = gemm_workspace.subspan(static_cast<size_t>(omp_get_thread_num() * team_floats),
                                       static_cast<size_t>(team_floats));
      gemm_threads = 1;
    }
    const float* xg = xb + g * in_group;
    const GemmOperand a = prepacked() ? GemmOperand(packed_[g]) : GemmOperand(weights + g * m() * k(), k());
    GemmEpilogue epilogue;
    epilogue.bias_kind = bias ? GemmBias::kPerRow : GemmBias::kNone;
    epilogue.bias = bias ? bias + g * m() : nullptr;
    epilogue.activation = act;
    if (residual) epilogue.addend = residual + b * out_image + g * m() * n();
    float* yg = y + b * out_image + g * m() * n();
    if (pixels_as_rows_) {  // Y^T = X^T W^T, stored transposed into Y
      if (bias) epilogue.bias_kind = GemmBias::kPerColumn;
      epilogue.transposed_c = true;
      gemm(n(), m(), k(), 1.0f, GemmOperand(xg, n(), true), a, 0.0f, yg, n(), epilogue, scratch, gemm_threads,
           *kernel_);
    } else if (pointwise_ && scale) {
      const ScaledRows rows{xg, n(), scale + b * s.cin + g * k()};
      const BPanelPacker packer{&pack_scaled_panel, &rows};
      gemm(m(), n(), k(), 1.0f, a, GemmOperand(packer), 0.0f, yg, n(), epilogue, scratch, gemm_threads, *kernel_);
    } else if (pointwise_) {
      gemm(m(), n(), k(), 1.0f, a, GemmOperand(xg, n()), 0.0f, yg, n(), epilogue, scratch, gemm_threads, *kernel_);
    } else {
      const Im2colSource source{&s, xg};
      const BPanelPacker packer{&pack_im2col_panel, &source};
      gemm(m(), n(), k(), 1.0f, a, GemmOperand(packer), 0.0f, yg, n(), epilogue, scratch, gemm_threads, *kernel_);
    }
  };
  for (int64_t b = 0; b < batch; ++b) {
    const float* xb = x + b * in_image;
    if (sub) {
      subsample_pointwise_input(s, xb, sub_x, threads);
      xb = sub_x;
    }
    for_each_on_team(team, s.group, [&](int64_t g) { run_group(xb, b, g); });
  }
}

}  // namespace minfer::kernels
