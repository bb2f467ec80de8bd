#include "ops/kernels/max_pool.h"

#include <omp.h>

#include <algorithm>

#include "graph/shape.h"
#include "ops/kernels/padded_rows.h"
#include "ops/kernels/threads.h"
#include "ops/kernels/workspace.h"

namespace minfer::kernels {
namespace {

// One thread's padded plane: h rows of `stride` phases (ops/kernels/padded_rows.h).
int64_t scratch_floats(const MaxPoolKernel& k, const PoolShape& s) {
  return checked_mul({s.h, k.stride, padded_phase_len(s.out_w, k.lanes, s.win.kw, 1, k.stride)});
}

int threads_for(const PoolShape& s, int64_t planes, int threads) {
  return threads_worth_starting(checked_mul({planes, s.out_h, s.out_w, s.win.kh, s.win.kw}), planes, threads,
                                Work::kStreaming);
}

}  // namespace

const MaxPoolKernel* find_max_pool_kernel(const PoolShape& s, Isa isa) {
  const Window2d& w = s.win;
  // Padding wider than the window would only widen the scratch plane: the generic loop.
  if (w.dw != 1 || (w.sw != 1 && w.sw != 2) || w.kh > kMaxPoolMaxWindow || w.kw > kMaxPoolMaxWindow ||
      w.pad_left >= w.kw || w.pad_right >= w.kw)
    return nullptr;
  // The one-lane template loses to the generic loop (its select is a branch on the data).
  if (isa == Isa::kScalar || !isa_runnable(isa)) return nullptr;
  const MaxPoolKernel* kernels = isa == Isa::kAvx2 ? max_pool_kernels_avx2 : max_pool_kernels_avx512;
  return &kernels[w.sw - 1];
}

int64_t max_pool_workspace_floats(const MaxPoolKernel& k, const PoolShape& s, int64_t planes, int threads) {
  return checked_mul({scratch_floats(k, s), threads_for(s, planes, threads)});
}

void max_pool2d(const MaxPoolKernel& k, const PoolShape& s, int64_t planes, const float* x, float* y,
                std::span<float> workspace, int threads) {
  const int64_t scratch = scratch_floats(k, s);
  require_workspace(workspace, scratch, "max pool");  // one thread's share, at least
  const int team = static_cast<int>(
      std::min<int64_t>(threads_for(s, planes, threads), static_cast<int64_t>(workspace.size()) / scratch));
  // Each thread a contiguous run of planes, fixed by the team size alone.
#pragma omp parallel num_threads(team) if (team > 1)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    k.run_planes(s, x, y, planes * t / n, planes * (t + 1) / n, workspace.data() + t * scratch);
  }
}

}  // namespace minfer::kernels
