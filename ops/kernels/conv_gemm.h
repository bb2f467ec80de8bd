// Convolution as the packed GEMM of ops/kernels/gemm.h, per image and group:
//   Y_g[Cout/g, Hout*Wout] = act(W_g[Cout/g, K] x col_g[K, Hout*Wout] + bias),  K = Cin/g*Kh*Kw.
// The weights are packed once (when constant); im2col is fused into the GEMM's B packing
// (each B panel is gathered from the image just before the micro-kernel reads it), so no
// [K, Hout*Wout] column matrix exists; a pointwise convolution (1x1, no padding) reads
// the input as B directly, after subsampling it into the workspace when strided (ResNet's
// downsampling shortcuts). Used by Conv and ConvTranspose's conv method.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ops/activation.h"
#include "ops/kernels/gemm.h"
#include "ops/reference/conv2d.h"

namespace minfer::kernels {

class ConvGemm {
 public:
  ConvGemm() = default;
  // `constant_weights` [cout, cin / group, kh, kw] are packed now; null: the weights are a
  // run-time input, passed to run() and packed by each GEMM call.
  ConvGemm(const ConvGeometry& s, const float* constant_weights, Isa isa);

  // 1x1, no padding: the input (subsampled first when strided) is the GEMM's B as it is.
  bool pointwise() const { return pointwise_; }
  // Floats of the subsampled image in the workspace (0 unless strided pointwise).
  int64_t subsampled_floats() const;
  // Pixels as the product's rows (see pixels_as_rows()).
  bool pixels_as_rows() const { return pixels_as_rows_; }
  bool prepacked() const { return !packed_.empty(); }
  const GemmKernel& kernel() const { return *kernel_; }

  // y [batch, cout, out_h, out_w] = act(conv(x * scale) + bias + residual) from x [batch,
  // cin, h, w]; `weights` is used only when none were packed; bias, residual (shaped as
  // y) and scale ([batch, cin], each input channel's factor) may be null. The scale is
  // applied as B is packed: only when pointwise() and not pixels_as_rows().
  void run(int64_t batch, const float* x, const float* weights, const float* bias, const Activation& act, float* y,
           std::span<float> workspace, int threads, const float* residual = nullptr,
           const float* scale = nullptr) const;

 private:
  int64_t m() const { return shape_.cout_per_group(); }
  int64_t n() const { return shape_.out_h * shape_.out_w; }
  int64_t k() const { return shape_.cin_per_group() * shape_.win.kh * shape_.win.kw; }

  ConvGeometry shape_;
  bool pointwise_ = false;
  bool pixels_as_rows_ = false;
  const GemmKernel* kernel_ = nullptr;
  std::vector<PackedMatrix> packed_;  // one per group: A, or B when pixels are rows
};

// Floats of workspace ConvGemm::run needs with up to `threads` threads: the GEMM's
// per-thread packing scratch (B panels, and A unless the weights are prepacked) and a
// strided pointwise convolution's subsampled image; no column matrix.
int64_t conv_gemm_workspace_floats(const ConvGeometry& s, const GemmKernel& kernel, bool weights_prepacked,
                                   int threads);

// True when s is a 1x1 convolution with unit stride and no padding.
bool is_pointwise(const ConvGeometry& s);
// True when s is a 1x1 convolution with no padding and a stride above 1.
bool is_strided_pointwise(const ConvGeometry& s);
// What a strided pointwise convolution s reads: x [cin, h, w] -> dst [cin, out_h, out_w],
// every sh-th row, every sw-th column.
void subsample_pointwise_input(const ConvGeometry& s, const float* x, float* dst, int threads);
// The same for output pixels [p0, p1) of `channels` channels from x's first, into their
// places in dst (channels out_h * out_w apart): the pixels a thread then computes.
void subsample_pointwise_pixels(const ConvGeometry& s, const float* x, float* dst, int64_t channels, int64_t p0,
                                int64_t p1);

// Whether a (possibly strided) pointwise convolution with constant weights computes Y^T[pixels, cout] =
// X^T W^T (pixels broadcast, output channels along the vectors, the output tile stored
// transposed) rather than Y = W X (pixels along the vectors). The kernel's tiles waste
// the lanes past the last pixel of a row of vectors: 15 of 64 at 7x7 = 49 pixels, none
// at 56x56; channels come in multiples of the vector width in most networks. Decided by
// the padded tile steps of both orders, the transposed one paying for its transposes.
bool pointwise_pixels_as_rows(const ConvGeometry& s, const GemmKernel& kernel);

}  // namespace minfer::kernels
