// The direct SIMD depthwise convolution (group == channels, multiplier 1) for 3x3, 5x5
// and 7x7 windows (ConvNeXt's) with strides 1 and 2, NCHW in and out, with a bias and activation
// epilogue, in one of two forms chosen per shape by find_depthwise_kernel:
//  - per plane (depthwise_conv_impl.h): vectorised along the output width, one OpenMP
//    thread per channel plane at a time; every target;
//  - channels in lanes (depthwise_conv_lanes_impl.h, AVX2 and AVX-512): a vector's lanes
//    are that many channels of one pixel, the planes transposed into a zero-bordered
//    tile and back, one thread per band of output rows of a channel group at a time;
//    for the planes too narrow (or strided) to fill the per-plane kernel's vectors, and
//    for NCHWc tensors (ops/blocked_layout.h; its c = the vector's lanes): an NCHWc input
//    is copied into the tile row by row instead of transposed, an NCHWc output stored
//    as summed, so a depthwise layer can sit in a region of blocked convolutions.
// Both sum each output's taps in the same order, so they give the same bits. Dilated
// windows (equal dilations) run channels in lanes only. Other windows run
// ops/reference/depthwise_conv.h.
//
//   if (const DepthwiseKernel* k = find_depthwise_kernel(shape, isa, layouts)) {
//     own: threads x depthwise_thread_floats(*k, shape) (ThreadScratch)
//     depthwise_conv2d(*k, shape, batch, x, weights, bias, y, own, threads, activation, layouts);
//   }
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "ops/activation.h"
#include "ops/kernels/tensor_layouts.h"
#include "ops/kernels/workspace.h"
#include "ops/reference/conv2d.h"
#include "profiler/isa.h"

namespace minfer::kernels {

// One depthwise_conv2d call: planes i = n * channels + c of x [batch, channels, h, w]
// to y [batch, channels, out_h, out_w].
struct DepthwiseJob {
  const ConvGeometry* shape;
  const float* x;
  const float* weights;  // [channels, 1, k, k]
  const float* bias;     // [channels] or null
  const Activation* activation;
  float* y;
  BlockedLayouts layouts;  // NCHWc x or y: channels-in-lanes kernels only
};

struct DepthwiseKernel {
  const char* name;  // depthwise_f32_<k>x<k>s<stride>[_lanes]_<isa>
  Isa isa;
  int kernel_size, stride, lanes;
  bool channels_in_lanes;
  // y = act(bias + kernel (*) x) for work items [begin, end) of the job, one after the
  // other: planes (scratch: one padded input plane), or, channels_in_lanes, the
  // LaneLayout's bands (scratch: lane_scratch_floats).
  void (*run)(const DepthwiseJob& job, int64_t begin, int64_t end, float* scratch);
};

// How the channels-in-lanes kernels split a call: work item i is band i % bands of
// channel group i / bands % groups of image i / (bands * groups); a band is band_rows
// output rows (the whole plane unless its tiles would outgrow the cache budget), read
// from a tile of tile_rows input rows, pitch pixels of `lanes` floats each.
struct LaneLayout {
  int64_t pitch, tile_rows, band_rows, bands, groups;
  int64_t tile_floats(int64_t lanes) const { return tile_rows * pitch * lanes; }
};
LaneLayout lane_layout(const ConvGeometry& s, int64_t lanes);

// The kernel for s on target isa with these layouts, or nullptr when s is not a case the
// direct kernels cover (or the CPU cannot run isa): the caller then runs the reference.
// With an NCHWc input or output only a channels-in-lanes kernel of the blocked layout's
// lanes (blocked_lanes(isa)) will do, on channels in whole blocks.
const DepthwiseKernel* find_depthwise_kernel(const ConvGeometry& s, Isa isa = active_isa(),
                                             BlockedLayouts layouts = {});

// Floats of thread-kept scratch (whole lines) each thread of depthwise_conv2d needs: the
// padded plane a per-plane run fills, or a channels-in-lanes band's tiles and weights.
int64_t depthwise_thread_floats(const DepthwiseKernel& k, const ConvGeometry& s);

// y[n, c] = act(bias[c] + weights[c] (*) x[n, c]) for batch images; bias may be null.
// Each plane is computed by one thread, so the result does not depend on `threads`; the
// team is at most own.threads().
void depthwise_conv2d(const DepthwiseKernel& k, const ConvGeometry& s, int64_t batch, const float* x,
                      const float* weights, const float* bias, float* y, const ThreadScratch& own, int threads,
                      const Activation& act = {}, BlockedLayouts layouts = {});

// The windows every target has a kernel for: 3x3s1, 3x3s2, 5x5s1, 5x5s2, 7x7s1, 7x7s2.
inline constexpr size_t kDepthwiseWindows = 6;

// The kernels of one target (each window per plane, then the same windows with channels
// in lanes on the SIMD targets), for tests and benchmarks that compare them; ops use
// find_depthwise_kernel.
std::span<const DepthwiseKernel> depthwise_kernels(Isa isa);

// Whether find_depthwise_kernel gives s the channels-in-lanes form on a SIMD target of
// `lanes` floats per vector.
bool depthwise_prefers_lanes(const ConvGeometry& s, int lanes);

// Defined in depthwise_conv_<isa>.cc; constant-initialised, so naming one runs no code of
// its ISA.
extern const std::array<DepthwiseKernel, kDepthwiseWindows> depthwise_kernels_scalar;
extern const std::array<DepthwiseKernel, 2 * kDepthwiseWindows> depthwise_kernels_avx2, depthwise_kernels_avx512;

}  // namespace minfer::kernels
