// The direct SIMD depthwise convolution (group == channels, multiplier 1) for 3x3 and
// 5x5 windows with strides 1 and 2, NCHW, vectorised along the output width, with a bias
// and activation epilogue; one OpenMP thread per channel plane at a time. Other windows
// run ops/reference/depthwise_conv.h.
//
//   if (const DepthwiseKernel* k = find_depthwise_kernel(shape)) {
//     workspace: depthwise_workspace_floats(*k, shape, batch, threads) floats
//     depthwise_conv2d(*k, shape, batch, x, weights, bias, y, workspace, threads, activation);
//   }
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "ops/activation.h"
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
};

struct DepthwiseKernel {
  const char* name;  // depthwise_f32_<k>x<k>s<stride>_<isa>
  Isa isa;
  int kernel_size, stride, lanes;
  // y = act(bias + kernel (*) x) for planes [begin, end) of the job, one after the other;
  // scratch holds one padded input plane.
  void (*run_planes)(const DepthwiseJob& job, int64_t begin, int64_t end, float* scratch);
};

// The kernel for s on target isa, or nullptr when s is not a case the direct kernels
// cover (or the CPU cannot run isa): the caller then runs the reference.
const DepthwiseKernel* find_depthwise_kernel(const ConvGeometry& s, Isa isa = active_isa());

// Floats of workspace depthwise_conv2d needs for `batch` images with up to `threads`
// threads (a smaller workspace runs fewer threads).
int64_t depthwise_workspace_floats(const DepthwiseKernel& k, const ConvGeometry& s, int64_t batch, int threads);

// y[n, c] = act(bias[c] + weights[c] (*) x[n, c]) for batch images; bias may be null.
// Each plane is computed by one thread, so the result does not depend on `threads`.
void depthwise_conv2d(const DepthwiseKernel& k, const ConvGeometry& s, int64_t batch, const float* x,
                      const float* weights, const float* bias, float* y, std::span<float> workspace, int threads,
                      const Activation& act = {});

// The kernels of one target (3x3s1, 3x3s2, 5x5s1, 5x5s2), for tests and benchmarks that
// compare targets; ops use find_depthwise_kernel.
std::span<const DepthwiseKernel> depthwise_kernels(Isa isa);

// Defined in depthwise_conv_<isa>.cc; constant-initialised, so naming one runs no code of
// its ISA.
extern const std::array<DepthwiseKernel, 4> depthwise_kernels_scalar, depthwise_kernels_avx2, depthwise_kernels_avx512;

}  // namespace minfer::kernels
