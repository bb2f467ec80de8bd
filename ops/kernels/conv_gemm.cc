#include "ops/kernels/conv_gemm.h"

#include <algorithm>

#include "ops/kernels/padded_rows.h"

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

}  // namespace

bool is_pointwise(const ConvGeometry& s) {
  const Window2d& w = s.win;
  return w.kh == 1 && w.kw == 1 && w.sh == 1 && w.sw == 1 && w.pad_top == 0 && w.pad_left == 0 && w.pad_bottom == 0 &&
         w.pad_right == 0;
}

ConvGemm::ConvGemm(const ConvGeometry& s, const float* constant_weights, Isa isa)
    : shape_(s), pointwise_(is_pointwise(s)), kernel_(&gemm_kernel(isa)) {
  if (!constant_weights) return;
  for (int64_t g = 0; g < s.group; ++g)
    packed_.push_back(PackedMatrix::pack_a(*kernel_, constant_weights + g * m() * k(), k(), false, m(), k()));
}

int64_t conv_gemm_workspace_floats(const ConvGeometry& s, const GemmKernel& kernel, bool weights_prepacked,
                                   int threads) {
  const int64_t k = s.cin_per_group() * s.win.kh * s.win.kw;
  return gemm_workspace_bytes(kernel, s.cout_per_group(), s.out_h * s.out_w, k, threads,
                              weights_prepacked ? GemmPacked::kA : GemmPacked::kNone) /
         4;
}

void ConvGemm::run(int64_t batch, const float* x, const float* weights, const float* bias, const Activation& act,
                   float* y, std::span<float> workspace, int threads) const {
  const ConvGeometry& s = shape_;
  const int64_t in_image = s.cin * s.h * s.w, out_image = s.cout * n();
  const int64_t in_group = s.cin_per_group() * s.h * s.w;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t g = 0; g < s.group; ++g) {
      const float* xg = x + b * in_image + g * in_group;
      const GemmOperand a = prepacked() ? GemmOperand(packed_[g]) : GemmOperand(weights + g * m() * k(), k());
      GemmEpilogue epilogue;
      epilogue.bias_kind = bias ? GemmBias::kPerRow : GemmBias::kNone;
      epilogue.bias = bias ? bias + g * m() : nullptr;
      epilogue.activation = act;
      float* yg = y + b * out_image + g * m() * n();
      if (pointwise_) {
        gemm(m(), n(), k(), 1.0f, a, GemmOperand(xg, n()), 0.0f, yg, n(), epilogue, workspace, threads, *kernel_);
      } else {
        const Im2colSource source{&s, xg};
        const BPanelPacker packer{&pack_im2col_panel, &source};
        gemm(m(), n(), k(), 1.0f, a, GemmOperand(packer), 0.0f, yg, n(), epilogue, workspace, threads, *kernel_);
      }
    }
  }
}

}  // namespace minfer::kernels
