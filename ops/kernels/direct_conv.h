// Direct SIMD convolution for layers with few input channels (the RGB first layer of
// most CNNs), where im2col + GEMM wastes its time: the GEMM's K (cin * kh * kw) is too
// short to amortise its packing and tile overheads, and the column buffer is kh * kw times
// the input; and for windows larger than 1x1 with fewer output channels than a vector
// has lanes (an image network's RGB last layer), which the blocked kernels pad to a whole
// block and the GEMM runs a row or two of its tile on (engine_bench, one thread, Zen 5:
// 64 -> 1, 3, 6, 8, 12 channels 3x3 at 128x128 0.38-0.81x the blocked Winograd time on
// AVX-512, 64 -> 1, 3, 6 0.38-0.71x on AVX2; 32 -> 3 3x3 stride 2 0.13x im2col's on AVX2;
// 16 -> 4 5x5 0.26-0.38x the blocked direct kernel's). NCHW, group 1, any window, stride and dilation; vectorised along
// the output width, a register tile of output channels x columns, a bias and activation epilogue, OpenMP threads over
// bands of output rows (each block of output channels runs over a band before the next: every plane is written in runs
// of rows, which took the RGB first layers of SqueezeNet, MobileNet V2, ResNet and GoogLeNet 3-15% less time in the
// models, engine_bench on Zen 4).
//
//   if (const DirectConvKernel* k = find_direct_conv_kernel(shape)) {
//     own: threads x direct_conv_thread_floats(*k, shape) (ThreadScratch)
//     direct_conv2d(*k, shape, batch, x, weights, bias, y, own, threads, activation);
//   }
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graph/shape.h"
#include "ops/activation.h"
#include "ops/kernels/workspace.h"
#include "ops/reference/conv2d.h"
#include "profiler/isa.h"

namespace minfer::kernels {

// The largest input channel count the direct kernel is chosen for where the output has
// a vector's lanes of channels or more; beyond it im2col + GEMM is faster (see
// docs/performance.md for the measurement).
inline constexpr int64_t kDirectConvMaxCin = 4;
// The most taps (cin * kh * kw) it takes: its tap table is on the stack (32 KiB). A
// style-transfer network's last layer, 32 channels of 9 x 9.
inline constexpr int64_t kDirectConvMaxTaps = 4096;

// The input rows (of each channel) a band of `rows` output rows reads, from its first
// output row's top window row to its last one's bottom: they share rows where the stride
// is below the window's height. Checked (a stride or dilation far beyond the input).
inline int64_t direct_conv_band_input_rows(const ConvGeometry& s, int64_t rows) {
  return checked_add({checked_mul({rows - 1, s.win.sh}), checked_mul({s.win.kh - 1, s.win.dh}), 1});
}

// A band of output rows (all output channels) of one image.
struct DirectConvRow {
  const ConvGeometry* shape;
  const float* x;        // the image [cin, h, w]
  const float* weights;  // [cout, cin, kh, kw]
  const float* bias;     // [cout] or null
  const Activation* activation;
  float* y;          // the image's output [cout, out_h, out_w]
  int64_t oy, rows;  // the band: output rows [oy, oy + rows)
  float* scratch;    // the padded input rows the band reads, each channel's in order
};

struct DirectConvKernel {
  const char* name;  // direct_conv_f32_<channels>x<columns>_<isa>: its register tile
  Isa isa;
  int lanes;
  void (*run_rows)(const DirectConvRow& band);
};

// The kernel for s on target isa, or nullptr when s is not a case it is chosen for
// (group 1, at most kDirectConvMaxTaps taps, and at most kDirectConvMaxCin input channels
// or a window past 1x1, strides within it, with fewer output channels than the kernel's
// lanes) or the CPU cannot run isa.
const DirectConvKernel* find_direct_conv_kernel(const ConvGeometry& s, Isa isa = active_isa());

// The kernel of one target whatever the shape (nullptr if the CPU cannot run it): on
// AVX-512 the 8-channel tile where a core has two 512-bit FMA pipes, else the 4-channel
// one (CpuInfo::fma_units; `fma_units_512` for tests).
const DirectConvKernel* direct_conv_kernel(Isa isa);
const DirectConvKernel* direct_conv_kernel(Isa isa, int fma_units_512);

// Every kernel of one target, for tests and benchmarks (empty if the CPU cannot run it).
std::vector<const DirectConvKernel*> direct_conv_kernels(Isa isa);

// Floats of thread-kept scratch (whole lines) each thread of direct_conv2d needs: the
// padded input rows of a band.
int64_t direct_conv_thread_floats(const DirectConvKernel& k, const ConvGeometry& s);

// y[n] = act(bias + weights (*) x[n]) for batch images; bias may be null. Each output row
// is computed by one thread, in the same order whatever the band, so the result does not
// depend on `threads`; the team is at most own.threads().
void direct_conv2d(const DirectConvKernel& k, const ConvGeometry& s, int64_t batch, const float* x,
                   const float* weights, const float* bias, float* y, const ThreadScratch& own, int threads,
                   const Activation& act = {});

// Defined in direct_conv_<isa>.cc; constant-initialised.
extern const DirectConvKernel direct_conv_f32_4x4_scalar, direct_conv_f32_4x24_avx2, direct_conv_f32_4x48_avx512,
    direct_conv_f32_8x48_avx512;

}  // namespace minfer::kernels
