#include "ops/kernels/depthwise_conv.h"

#include <omp.h>

#include <algorithm>

#include "ops/kernels/padded_rows.h"
#include "ops/kernels/threads.h"
#include "ops/kernels/workspace.h"

namespace minfer::kernels {
namespace {

// Floats of the padded plane one thread's run_plane call fills: the (out_h - 1) * stride
// + k rows the windows cover, each of `stride` phases.
int64_t scratch_floats(const DepthwiseKernel& k, const ConvGeometry& s) {
  const int64_t phase_len = padded_phase_len(s.out_w, k.lanes, k.kernel_size, 1, k.stride);
  return checked_mul({checked_add({checked_mul({s.out_h - 1, k.stride}), k.kernel_size}), k.stride, phase_len});
}

int threads_for(const ConvGeometry& s, int64_t batch, int threads) {
  const int64_t macs = checked_mul({batch, s.cout, s.out_h, s.out_w, s.win.kh, s.win.kw});
  return threads_worth_starting(macs, batch * s.cout, threads, Work::kStreaming);
}

}  // namespace

std::span<const DepthwiseKernel> depthwise_kernels(Isa isa) {
  return per_isa<std::span<const DepthwiseKernel>>(isa, depthwise_kernels_scalar, depthwise_kernels_avx2,
                                                   depthwise_kernels_avx512);
}

const DepthwiseKernel* find_depthwise_kernel(const ConvGeometry& s, Isa isa) {
  const Window2d& w = s.win;
  if (s.group != s.cin || s.cout != s.cin || w.kh != w.kw || w.sh != w.sw || w.dh != 1 || w.dw != 1) return nullptr;
  if (!isa_runnable(isa)) return nullptr;
  for (const DepthwiseKernel& k : depthwise_kernels(isa))
    if (k.kernel_size == w.kh && k.stride == w.sh) return &k;
  return nullptr;
}

int64_t depthwise_workspace_floats(const DepthwiseKernel& k, const ConvGeometry& s, int64_t batch, int threads) {
  return checked_mul({scratch_floats(k, s), threads_for(s, batch, threads)});
}

void depthwise_conv2d(const DepthwiseKernel& k, const ConvGeometry& s, int64_t batch, const float* x,
                      const float* weights, const float* bias, float* y, std::span<float> workspace, int threads,
                      const Activation& act) {
  const int64_t planes = batch * s.cin;
  const int64_t scratch = scratch_floats(k, s);
  require_workspace(workspace, scratch, "depthwise convolution");  // one thread's share, at least
  const int team = static_cast<int>(
      std::min<int64_t>(threads_for(s, batch, threads), static_cast<int64_t>(workspace.size()) / scratch));
  const DepthwiseJob job{&s, x, weights, bias, &act, y};
  // Each thread a contiguous run of planes, fixed by the team size alone.
#pragma omp parallel num_threads(team) if (team > 1)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    k.run_planes(job, planes * t / n, planes * (t + 1) / n, workspace.data() + t * scratch);
  }
}

}  // namespace minfer::kernels
