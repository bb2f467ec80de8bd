// The direct pointwise convolution: a 1x1 convolution with no padding and one group,
// NCHW in and out, computed straight from the input's channel rows with no packing of
// the input (a strided one from its input subsampled first, as the GEMM reads it). A
// register tile is `channels` output channels x `vectors` vectors of pixels: for each
// input channel it loads the tile's pixels once and multiplies them by each output
// channel's weight (broadcast from the weights, packed at bind time as [k][channels] per
// block of output channels), so the pixel slice of every input channel stays in L1
// across all the output channels' tiles and each output row is written in order. The
// GEMM (ops/kernels/conv_gemm.h) packs the input into panels on every call and splits K
// into blocks; on the small-K layers of the mobile networks that overhead was most of
// its time (docs/performance.md).
//
// Every output sums its products over the input channels in order, one fused
// multiply-add each, then adds the bias, then the residual, then applies the activation:
// the pointwise GEMM's order when K fits one of its K blocks (gemm_kernel(isa).kc), so
// there the two give the same bits (tests/kernels check it); past it the GEMM sums K in
// blocks and the last bits differ. A per-channel input scale s (squeeze-excitation's gate)
// is folded into a copy of the packed weights per image, W diag(s): m x k multiplies
// where scaling each input vector as a tile loads it cost m / channels times k x pixels
// (0.85x the time of EfficientNet's and MobileNetV3's projections without); the
// products then round as (w s) x, not w (s x) as the GEMM's, so with a scale the two
// differ in the last bits.
//
//   if (const PointwiseKernel* k = find_pointwise_kernel(shape, isa)) {
//     PointwiseConv conv(*k, shape, weights);   // packs the weights
//     workspace: conv.workspace_floats(scale != nullptr) floats
//     conv.run(batch, x, bias, act, y, workspace, threads, residual, scale);
//   }
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ops/activation.h"
#include "ops/window.h"
#include "profiler/isa.h"

namespace minfer::kernels {

// One call's operands: x [batch, k, pixels] -> y [batch, m, pixels].
struct PointwiseJob {
  const float* x;
  const float* weights;   // packed by PointwiseConv
  const float* bias;      // [m] or null
  const float* residual;  // [batch, m, pixels] or null: summed before the activation
  const Activation* activation;
  float* y;
  int64_t m, k, pixels;
  int64_t chunk;                   // output channels whose weights are read while a thread's pixels pass by
  int64_t span;                    // pixel blocks each block of output channels runs over before the next
  int64_t c_begin = 0, c_end = 0;  // the output channels run() computes, [c_begin, c_end)
};

struct PointwiseKernel {
  const char* name;  // pointwise_f32_<channels>x<vectors>_<isa>
  Isa isa;
  int lanes, channels, vectors;
  // Pixel blocks [begin, end) of image `image` (blocks of vectors * lanes pixels, the
  // last one maybe shorter), the job's output channels.
  void (*run)(const PointwiseJob& job, int64_t image, int64_t begin, int64_t end);
};

// The largest K the direct kernel takes on target isa: any on AVX-512, where it ran
// 1.06-1.38x the GEMM's speed on the wide 1x1 layers of ResNet-50, GoogLeNet and
// MobileNetV1 too (K 256 to 1024), the GEMM's K block on AVX2, where past it it ran
// 0.87-1.08x (bench/conv_bench.cc, Zen 4; docs/performance.md).
int64_t pointwise_direct_max_k(Isa isa);

// The kernel for s on target isa, or nullptr: not a plain pointwise convolution (1x1, no
// padding, one group), K above pointwise_direct_max_k, fewer output pixels than three
// tiles on AVX-512 or four on AVX2 (the GEMM with the pixels as its rows is faster
// there), the scalar target, or a target this CPU cannot run.
const PointwiseKernel* find_pointwise_kernel(const ConvGeometry& s, Isa isa = active_isa());

// A kernel bound to one convolution's shape and weights.
class PointwiseConv {
 public:
  PointwiseConv() = default;
  // weights [cout, cin, 1, 1], packed here. split_output_channels: the layer's reader
  // gives each thread whole channels (a depthwise convolution; the thread_splits pass).
  PointwiseConv(const PointwiseKernel& kernel, const ConvGeometry& s, const float* weights,
                bool split_output_channels = false);

  const PointwiseKernel& kernel() const { return *kernel_; }
  // Output channels per weight chunk (see PointwiseJob::chunk).
  int64_t chunk() const { return chunk_; }
  // Floats of workspace run() needs: a strided convolution's subsampled image, and with
  // an input scale the scaled weights (m x k) and one block's factors (k x channels).
  int64_t workspace_floats(bool input_scale = false) const;

  // y = act(W x (+ bias) (+ residual)) for batch images, x's channels scaled first when
  // scale ([batch, k]) is given; the pixel blocks, or the output channels where
  // splits_output_channels(), are split over up to `threads` threads, each output computed
  // by one thread in the same order whatever their number.
  void run(int64_t batch, const float* x, const float* bias, const Activation& act, float* y,
           std::span<float> workspace, int threads, const float* residual = nullptr,
           const float* scale = nullptr) const;

  // Whether a team splits the output channels: on planes of at most 28x28, where asked for
  // or where the layer has more output channels than pixels. MobileNetV2's expansions at
  // 14x14 and 28x28 (before their depthwise layers) took 0.63-0.78x the time so on two
  // threads, those at 56x56 0.72-1.43x and at 112x112 1.5x (Zen 5, two vCPUs that share no
  // cache; docs/performance.md). Split by pixels, each thread reads all m x k weights and
  // its share of the k x pixels input; split by channels, its share of the weights and all
  // the input: fewer bytes where m > pixels (SqueezeNet's 512 -> 1000 classifier on 13x13,
  // 2 MiB of weights: 0.77-0.81x its time on two threads).
  bool splits_output_channels() const { return (split_output_channels_ || m_ > pixels_) && pixels_ <= 28 * 28; }

 private:
  // run() on unit-stride inputs x with these packed weights; with `strided` (a strided
  // layer's input images), x is `subsampled`, where their pixels are subsampled first.
  void run_images(int64_t batch, const float* x, const float* weights, const float* bias, const Activation& act,
                  float* y, int threads, const float* residual, const float* strided = nullptr,
                  float* subsampled = nullptr) const;
  // The packed weights with input channel kk of every block times scale[kk], into dst;
  // `factors` (k x channels floats) holds a whole block's, so that each block is one
  // flat product.
  void scale_weights(const float* scale, float* factors, float* dst) const;

  const PointwiseKernel* kernel_ = nullptr;
  ConvGeometry shape_;
  int64_t m_ = 0, k_ = 0, pixels_ = 0, chunk_ = 0, span_ = 0;
  bool split_output_channels_ = false;
  std::vector<float> packed_;
};

// Defined in pointwise_conv_<isa>.cc; constant-initialised.
extern const PointwiseKernel pointwise_kernel_avx2, pointwise_kernel_avx512;

}  // namespace minfer::kernels
