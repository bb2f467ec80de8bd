#include "ops/kernels/pointwise_conv.h"

#include <omp.h>

#include <algorithm>
#include <limits>

#include "graph/shape.h"
#include "ops/kernels/conv_gemm.h"
#include "ops/kernels/gemm.h"
#include "ops/kernels/threads.h"
#include "ops/kernels/work_shares.h"
#include "ops/kernels/workspace.h"

namespace minfer::kernels {
namespace {

// The weights a thread's pixels meet before they come round again: chunks of output
// channels of at most this many bytes of weights stay in L2 while the pixels pass by
// (a 512 x 512 layer's 1 MiB of weights would otherwise be read from L3 once per pixel
// block).
constexpr int64_t kChunkBytes = int64_t{128} << 10;

// The input rows of a span of pixel blocks (at most this many bytes) stay in L2 while
// every block of output channels runs over the span: each output row is then written in
// runs of the span's pixels, not a tile's.
constexpr int64_t kSpanBytes = int64_t{128} << 10;

// Pixels of at least this many tiles: measured with bench/conv_bench.cc (Zen 4, one
// thread; docs/performance.md), the direct kernel ran 1.1-1.9x the GEMM's speed on every
// MobileNet and EfficientNet layer of 14x14 pixels or more on both targets and 1.1-1.3x
// on SqueezeNet's 13x13 ones on AVX-512 (169 pixels, 3.5 tiles), 0.8x on the 7x7 ones
// (49 pixels: one AVX-512 tile and a pixel, two AVX2 tiles and a pixel), where the GEMM
// computes the pixels as its rows. In between it varied with the last tile's fill
// (256 -> 256 channels on 100 pixels: 0.94x AVX-512, 0.8x AVX2; on 144: 1.1x, 1.0x).
constexpr int64_t min_tiles(Isa isa) {
  return isa == Isa::kAvx512 ? 3 : 4;
}

int64_t blocks_per_image(const PointwiseKernel& k, int64_t pixels) {
  const int64_t p = int64_t{k.vectors} * k.lanes;
  return (pixels + p - 1) / p;
}

}  // namespace

int64_t pointwise_direct_max_k(Isa isa) {
  return isa == Isa::kAvx512 ? std::numeric_limits<int64_t>::max() : gemm_kernel(isa).kc;
}

const PointwiseKernel* find_pointwise_kernel(const ConvGeometry& s, Isa isa) {
  const Window2d& w = s.win;
  if (s.group != 1 || w.kh != 1 || w.kw != 1 || w.pad_top != 0 || w.pad_left != 0 || w.pad_bottom != 0 ||
      w.pad_right != 0)
    return nullptr;
  if (isa == Isa::kScalar || !isa_runnable(isa)) return nullptr;
  const PointwiseKernel& k = isa == Isa::kAvx2 ? pointwise_kernel_avx2 : pointwise_kernel_avx512;
  if (s.cin > pointwise_direct_max_k(isa) || s.out_h * s.out_w < min_tiles(isa) * k.vectors * k.lanes) return nullptr;
  return &k;
}

PointwiseConv::PointwiseConv(const PointwiseKernel& kernel, const ConvGeometry& s, const float* weights,
                             bool split_output_channels)
    : kernel_(&kernel),
      shape_(s),
      m_(s.cout),
      k_(s.cin),
      pixels_(s.out_h * s.out_w),
      split_output_channels_(split_output_channels) {
  const int64_t cb = kernel.channels;
  chunk_ = std::max<int64_t>(cb, kChunkBytes / (4 * k_) / cb * cb);
  span_ = std::max<int64_t>(1, kSpanBytes / (4 * k_ * kernel.vectors * kernel.lanes));
  // Block co (channels [co, co + width)): [k][width] at co * k.
  packed_.resize(static_cast<size_t>(checked_mul({m_, k_})));
  for (int64_t co = 0; co < m_; co += cb) {
    const int64_t width = std::min(cb, m_ - co);
    float* block = packed_.data() + co * k_;
    for (int64_t kk = 0; kk < k_; ++kk)
      for (int64_t c = 0; c < width; ++c) block[kk * width + c] = weights[(co + c) * k_ + kk];
  }
}

int64_t PointwiseConv::workspace_floats(bool input_scale) const {
  const int64_t subsampled = is_strided_pointwise(shape_) ? checked_mul({k_, pixels_}) : 0;
  return input_scale ? checked_add({subsampled, checked_mul({m_, k_}), checked_mul({k_, kernel_->channels})})
                     : subsampled;
}

void PointwiseConv::scale_weights(const float* scale, float* factors, float* dst) const {
  const int64_t cb = kernel_->channels;
  for (int64_t kk = 0; kk < k_; ++kk) std::fill_n(factors + kk * cb, cb, scale[kk]);
  for (int64_t co = 0; co < m_; co += cb) {
    const int64_t width = std::min(cb, m_ - co), n = k_ * width;
    const float* src = packed_.data() + co * k_;
    float* out = dst + co * k_;
    if (width == cb) {
      for (int64_t i = 0; i < n; ++i) out[i] = src[i] * factors[i];
    } else {  // the last, narrower block: [k][width]
      for (int64_t i = 0; i < n; ++i) out[i] = src[i] * scale[i / width];
    }
  }
}

void PointwiseConv::run(int64_t batch, const float* x, const float* bias, const Activation& act, float* y,
                        std::span<float> workspace, int threads, const float* residual, const float* scale) const {
  const bool strided = is_strided_pointwise(shape_);
  if (!strided && !scale) {
    run_images(batch, x, packed_.data(), bias, act, y, threads, residual);
    return;
  }
  // Image by image: subsampled into the workspace and its weights scaled, then as a
  // unit-stride convolution.
  require_workspace(workspace, workspace_floats(scale != nullptr), "pointwise convolution");
  float* const subsampled = workspace.data();
  float* const scaled = subsampled + (strided ? k_ * pixels_ : 0);
  float* const factors = scaled + m_ * k_;
  const int64_t in_image = shape_.cin * shape_.h * shape_.w, out_image = m_ * pixels_;
  for (int64_t n = 0; n < batch; ++n) {
    if (scale) scale_weights(scale + n * k_, factors, scaled);
    run_images(1, strided ? subsampled : x + n * in_image, scale ? scaled : packed_.data(), bias, act,
               y + n * out_image, threads, residual ? residual + n * out_image : nullptr,
               strided ? x + n * in_image : nullptr, subsampled);
  }
}

void PointwiseConv::run_images(int64_t batch, const float* x, const float* weights, const float* bias,
                               const Activation& act, float* y, int threads, const float* residual,
                               const float* strided, float* subsampled) const {
  const PointwiseJob job{x, weights, bias, residual, &act, y, m_, k_, pixels_, chunk_, span_, 0, m_};
  const int64_t blocks = blocks_per_image(*kernel_, pixels_);
  const int64_t block_pixels = int64_t{kernel_->vectors} * kernel_->lanes;
  const int64_t in_image = shape_.cin * shape_.h * shape_.w, x_image = k_ * pixels_;
  // A strided layer's input pixels, subsampled where the blocks [begin, end) read them.
  const auto subsample = [&](int64_t image, int64_t begin, int64_t end) {
    if (strided)
      subsample_pointwise_pixels(shape_, strided + image * in_image, subsampled + image * x_image, k_,
                                 begin * block_pixels, std::min(pixels_, end * block_pixels));
  };
  if (splits_output_channels()) {
    // Items: pieces of blocks of output channels, a quarter of a thread's share, each over
    // every pixel block of an image (its input, at most 28x28 pixels, stays in L2).
    const int64_t cb = kernel_->channels, channel_blocks = (m_ + cb - 1) / cb;
    const int64_t piece = std::max<int64_t>(1, channel_blocks / (4 * std::max(threads, 1)));
    const int64_t pieces = (channel_blocks + piece - 1) / piece, items = checked_mul({batch, pieces});
    const int team = threads_worth_starting(checked_mul({batch, m_, k_, pixels_}), items, threads, Work::kDense);
    if (team > 1) {
      if (strided)  // every item reads every pixel
        for (int64_t image = 0; image < batch; ++image)
          subsample_pointwise_input(shape_, strided + image * in_image, subsampled + image * x_image, team);
      WorkShares shares(items, team);
#pragma omp parallel num_threads(team)
      for (int64_t i; (i = shares.take(omp_get_thread_num())) >= 0;) {
        PointwiseJob part = job;
        part.c_begin = i % pieces * piece * cb;
        part.c_end = std::min(m_, part.c_begin + piece * cb);
        kernel_->run(part, i / pieces, 0, blocks);
      }
      return;
    }
  }
  // Items: pieces of pixel blocks, a quarter of a thread's share but at most a span (whose
  // input rows stay in L2 while every output channel passes over them; a span per item
  // left a 28x28 layer one item, so one thread); each thread takes its own share first,
  // then the others' (work_shares.h). One thread runs each image's blocks in one call.
  const int64_t piece = std::clamp<int64_t>(blocks / (4 * std::max(threads, 1)), 1, span_);
  const int64_t spans = (blocks + piece - 1) / piece;
  const int64_t items = checked_mul({batch, spans});
  const int team = threads_worth_starting(checked_mul({batch, m_, k_, pixels_}), items, threads, Work::kDense);
  if (team <= 1) {
    for (int64_t image = 0; image < batch; ++image) {
      subsample(image, 0, blocks);
      kernel_->run(job, image, 0, blocks);
    }
    return;
  }
  // Each item subsamples the pixels it computes: the thread that reads them writes them,
  // and no thread waits for another's.
  WorkShares shares(items, team);
#pragma omp parallel num_threads(team)
  for (int64_t i; (i = shares.take(omp_get_thread_num())) >= 0;) {
    const int64_t image = i / spans, begin = i % spans * piece, end = std::min(blocks, begin + piece);
    subsample(image, begin, end);
    kernel_->run(job, image, begin, end);
  }
}

}  // namespace minfer::kernels
