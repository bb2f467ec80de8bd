#include "ops/kernels/pool2d.h"

#include <omp.h>

#include <algorithm>

#include "graph/shape.h"
#include "ops/kernels/threads.h"
#include "ops/kernels/workspace.h"

namespace minfer::kernels {
namespace {

int64_t round_up(int64_t n, int64_t m) {
  return (n + m - 1) / m * m;
}

// Output rows narrower than this take the flat path. Measured with op_bench on Zen 4
// against the phase planes (AVX-512 from 16 columns out: against rows first). Stride 1:
// AVX-512 7x7 1.8-2.2x, 14x14 1.4-1.5x, 28x28 1.2x; AVX2 7x7 and 14x14 1.1x, 28x28 (four
// vectors a row) 0.77x. Stride 2, AVX-512: 14x14 to 7x7 1.7x (3x3) and 1.9x (2x2), 28x28
// to 14x14 1.36x, 56x56 to 28x28 0.75x; AVX2 14x14 to 7x7 0.8x (its deinterleave and
// masked loads cost more).
int64_t flat_max_width(const Pool2dKernel& k, int64_t stride) {
  if (stride == 1) return 2 * k.lanes;
  return k.lanes == 16 ? k.lanes : 0;
}

int threads_for(const PoolShape& s, int64_t planes, int threads) {
  return threads_worth_starting(checked_mul({planes, s.out_h, s.out_w, s.win.kh, s.win.kw}), planes, threads,
                                Work::kStreaming);
}

}  // namespace

const Pool2dKernel* find_pool2d_kernel(const PoolShape& s, Isa isa) {
  const Window2d& w = s.win;
  // Padding wider than the window would only widen the scratch plane: the generic loop.
  if (w.dw != 1 || (w.sw != 1 && w.sw != 2) || w.kh > kPool2dMaxWindow || w.kw > kPool2dMaxWindow ||
      w.pad_left >= w.kw || w.pad_right >= w.kw)
    return nullptr;
  // The one-lane template loses to the generic loop (its select is a branch on the data).
  if (isa == Isa::kScalar || !isa_runnable(isa)) return nullptr;
  const Pool2dKernel* kernels = isa == Isa::kAvx2 ? pool2d_kernels_avx2 : pool2d_kernels_avx512;
  return &kernels[w.sw - 1];
}

Pool2dLayout pool2d_layout(const Pool2dKernel& k, const PoolShape& s) {
  const Window2d& w = s.win;
  Pool2dLayout l;
  const int64_t row_reach = (w.kh - 1) * w.dh / w.sh, column_reach = (w.kw - 1) / w.sw;
  l.pitch = s.out_w + column_reach;
  l.rows = s.out_h + row_reach;
  const int64_t outputs = checked_mul({s.out_h, l.pitch});
  // The slack: the last vector's reach past the outputs, and a vector past the last row.
  l.phase_floats = round_up(outputs, k.lanes) + row_reach * l.pitch + column_reach + k.lanes;
  l.phases = w.sh * w.sw;
  // Vectors of taps (the row copies cost about one each): along the rows, the last one
  // of each row partly wasted; along the whole plane, the columns past out_w wasted.
  const int64_t taps = w.kh * w.kw;
  const int64_t row_vectors = s.out_h * ((s.out_w + k.lanes - 1) / k.lanes);
  const int64_t plane_vectors = (outputs + k.lanes - 1) / k.lanes;
  l.whole_plane = s.out_w < k.lanes || plane_vectors * taps + s.out_h < row_vectors * taps;
  if (l.whole_plane) l.out_floats = round_up(outputs, k.lanes);
  l.scratch_floats = checked_mul({2, l.phases, l.phase_floats}) + l.out_floats;
  l.flat = w.dh == 1 && w.sh == w.sw && s.w == w.sw * s.out_w && s.out_w < flat_max_width(k, w.sw);
  if (l.flat) l.scratch_floats += 2 * (round_up(checked_mul({s.h, s.out_w}), k.lanes) + k.lanes);
  return l;
}

int64_t pool2d_thread_floats(const Pool2dKernel& k, const PoolShape& s) {
  return whole_lines(pool2d_layout(k, s).scratch_floats);
}

namespace {

// The team over blocks x out_h output rows of an NCHWc pool, each thread a contiguous run.
template <class RunRows>
void pool2d_nchwc(Isa isa, const PoolShape& s, int64_t blocks, int threads, RunRows run_rows) {
  const Pool2dKernel& k = isa == Isa::kAvx2 ? pool2d_kernels_avx2[0] : pool2d_kernels_avx512[0];
  const int64_t rows = blocks * s.out_h;
  const int team = threads_worth_starting(checked_mul({rows, s.out_w, k.lanes, s.win.kh, s.win.kw}), rows, threads,
                                          Work::kStreaming);
#pragma omp parallel num_threads(team) if (team > 1)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    run_rows(k, rows * t / n, rows * (t + 1) / n);
  }
}

// The team over the planes of an NCHW pool, each thread a contiguous run (fixed by the
// team size alone) through its scratch.
template <class RunPlanes>
void pool2d(const Pool2dKernel& k, const PoolShape& s, int64_t planes, const ThreadScratch& own, int threads,
            RunPlanes run_planes) {
  const Pool2dLayout l = pool2d_layout(k, s);
  const int64_t scratch = whole_lines(l.scratch_floats);
  own.floats(0, scratch, "pool");  // one thread's, at least
  const int team = std::min(threads_for(s, planes, threads), own.threads());
#pragma omp parallel num_threads(team) if (team > 1)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    run_planes(l, planes * t / n, planes * (t + 1) / n, own.floats(t, scratch, "pool").data());
  }
}

}  // namespace

void max_pool2d_nchwc(Isa isa, const PoolShape& s, int64_t blocks, const float* x, float* y, int threads) {
  pool2d_nchwc(isa, s, blocks, threads,
               [&](const Pool2dKernel& k, int64_t begin, int64_t end) { k.run_nchwc_rows(s, x, y, begin, end); });
}

void average_pool2d_nchwc(Isa isa, const PoolShape& s, bool count_include_pad, int64_t blocks, const float* x, float* y,
                          int threads) {
  pool2d_nchwc(isa, s, blocks, threads, [&](const Pool2dKernel& k, int64_t begin, int64_t end) {
    k.run_average_nchwc_rows(s, count_include_pad, x, y, begin, end);
  });
}

void max_pool2d(const Pool2dKernel& k, const PoolShape& s, int64_t planes, const float* x, float* y,
                const ThreadScratch& own, int threads) {
  pool2d(k, s, planes, own, threads, [&](const Pool2dLayout& l, int64_t begin, int64_t end, float* scratch) {
    k.run_planes(s, l, x, y, begin, end, scratch);
  });
}

void average_pool2d(const Pool2dKernel& k, const PoolShape& s, bool count_include_pad, int64_t planes, const float* x,
                    float* y, const ThreadScratch& own, int threads) {
  pool2d(k, s, planes, own, threads, [&](const Pool2dLayout& l, int64_t begin, int64_t end, float* scratch) {
    k.run_average_planes(s, l, count_include_pad, x, y, begin, end, scratch);
  });
}

}  // namespace minfer::kernels
