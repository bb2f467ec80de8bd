// The SIMD 2-D pools, MaxPool and AveragePool. The max pool: NCHW, horizontal stride 1
// or 2 and dilation 1, windows up to 16 x 16, any vertical stride and dilation, any
// padding and ceil_mode. Each plane is copied into a scratch split into stride phases
// in both directions (padded row r in phase r % sh, padded column c in phase c % sw, as
// the direct convolution's rows in ops/kernels/padded_rows.h) whose border holds -inf,
// written once per call; every tap is then one unaligned vector load at a fixed offset,
// with no bounds checks. Two such scratches alternate: plane p + 1 is copied in before
// plane p is pooled. The vectors run along each output row, or for short rows (7x7
// planes) along the whole phase plane, whose rows are then copied to the output. Every
// output is nan_max over its window in window order, so the result is the generic
// loop's (ops/pool.cc runs the other shapes) bit for bit. On AVX-512, 3x3 windows at
// stride 1 or 2 on output rows of at least a vector (the stem pools of ResNet,
// GoogLeNet and SqueezeNet, GoogLeNet's 28x28 ones) skip the copy: each input row's
// maxima over column triples (at stride 2 a register deinterleave) go to a ring of
// three rows, and each output row is the maximum of its window rows' in order; the
// first of equal values in window order still wins (row maxima first, then rows). A
// plane with a NaN, which that path's one-instruction max would not keep, is pooled
// again through the phase planes. Measured with op_bench on Zen 4: 1.3-1.5x the
// phase-plane kernel at stride 2, 1.1x at stride 1; on AVX2 0.7-1.4x, so AVX2 keeps the
// phase planes. Narrow planes whose input rows are exactly the stride times the output
// rows (GoogLeNet's inception pools at stride 1, its 28x28 and 14x14 ones at stride 2
// on AVX-512) are pooled flat: the plane as one run of floats, the row maxima's vectors
// across its rows, the taps outside a row masked (the same two passes, no copy;
// pool2d_layout's flat, pool2d.cc says where each was measured faster).
// The NCHW average pool takes the same phase planes, their border 0: each output the
// sum of all its window's taps in window order (the padding's zeros change no sum's
// bits), divided by the taps that count, the generic loop's bits (it took DenseNet's
// 2x2 and Inception's 3x3 pools several times this kernel's time).
//
//   if (const Pool2dKernel* k = find_pool2d_kernel(shape, isa)) {
//     own: threads x pool2d_thread_floats(*k, shape) (ThreadScratch)
//     max_pool2d(*k, shape, planes, x, y, own, threads);  // or average_pool2d
//   }
#pragma once

#include <cstdint>
#include <span>

#include "ops/kernels/workspace.h"
#include "ops/window.h"
#include "profiler/isa.h"

namespace minfer::kernels {

// The largest window height and width the kernel takes (pooling windows are 2 to 7 wide
// in practice; a window far wider than its input runs the generic loop's closed form).
inline constexpr int64_t kPool2dMaxWindow = 16;

// One plane's geometry: x [h, w] -> y [out_h, out_w].
struct PoolShape {
  int64_t h = 0, w = 0, out_h = 0, out_w = 0;
  Window2d win;
};

// One plane in the scratch: `phases` (vertical times horizontal stride) phase planes of
// phase_floats each, rows `pitch` floats apart; output (oy, ox)'s window tap (ki, kj)
// reads phase (ki * dh % sh, kj % sw) at (oy + ki * dh / sh) * pitch + ox + kj / sw.
struct Pool2dLayout {
  int64_t pitch = 0;         // out_w plus the farthest tap's column offset
  int64_t rows = 0;          // phase rows that hold input: out_h plus the farthest tap's row offset
  int64_t phase_floats = 0;  // rows and the slack the last vector reads past them
  int64_t phases = 0;
  // The vectors run along the whole phase plane (out_h * pitch outputs, the columns past
  // out_w thrown away) into out_floats of scratch, then each row is copied to y: chosen
  // when it takes fewer vectors than the rows do (rows narrower than a vector).
  bool whole_plane = false;
  int64_t out_floats = 0;
  // Dilation 1, stride S (1 or 2) both ways, w == S * out_w, out_w narrower than
  // pool2d.cc's flat_max_width: no phase planes, the plane pooled as one run of floats
  // (pool2d_impl.h), through two buffers of its row maxima; the phase planes' scratch
  // after them for a plane with a NaN.
  bool flat = false;
  int64_t scratch_floats = 0;  // one thread's: two copies of the phases, and out_floats
};

struct Pool2dKernel {
  Isa isa;
  int lanes, stride;
  // Planes [begin, end) of x to y, one after the other, through l.scratch_floats of scratch.
  void (*run_planes)(const PoolShape& s, const Pool2dLayout& l, const float* x, float* y, int64_t begin, int64_t end,
                     float* scratch);
  // The average pool of the same planes (phase planes only: the other paths fold rows
  // first), each output divided as average_pool2d_nchwc's.
  void (*run_average_planes)(const PoolShape& s, const Pool2dLayout& l, bool count_include_pad, const float* x,
                             float* y, int64_t begin, int64_t end, float* scratch);
  // NCHWc with c = lanes (any stride and dilation): output rows [begin, end) of all the
  // blocks' planes (row r is block r / out_h's row r % out_h), each output pixel the
  // nan_max of its window's c-lane vectors inside the input, in window order.
  void (*run_nchwc_rows)(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end);
  // The NCHWc average pool of the same rows: each output pixel the sum of its window's
  // vectors inside the input, in window order, divided by the taps that count.
  void (*run_average_nchwc_rows)(const PoolShape& s, bool count_include_pad, const float* x, float* y, int64_t begin,
                                 int64_t end);
};

// The kernel for s on target isa, or nullptr (a horizontal stride other than 1 and 2, a
// horizontal dilation, a window larger than kPool2dMaxWindow, padding as wide as the
// window, the scalar target, or a target this CPU cannot run).
const Pool2dKernel* find_pool2d_kernel(const PoolShape& s, Isa isa = active_isa());

// Where kernel k keeps a plane of shape s (chosen from s and the vector width alone).
Pool2dLayout pool2d_layout(const Pool2dKernel& k, const PoolShape& s);

// Floats of thread-kept scratch (whole lines) each thread of max_pool2d needs.
int64_t pool2d_thread_floats(const Pool2dKernel& k, const PoolShape& s);

// y[p] = max over each window of x[p] for planes p in [0, planes); each plane is pooled by
// one thread; the team is at most own.threads().
void max_pool2d(const Pool2dKernel& k, const PoolShape& s, int64_t planes, const float* x, float* y,
                const ThreadScratch& own, int threads);
// The average pool of the same planes, the same way (each output the mean of its window's
// taps inside the input, or with count_include_pad inside the padded input).
void average_pool2d(const Pool2dKernel& k, const PoolShape& s, bool count_include_pad, int64_t planes, const float* x,
                    float* y, const ThreadScratch& own, int threads);

// The same in NCHWc ([blocks, h, w, c] -> [blocks, out_h, out_w, c], c the lanes of
// isa's kernels, which must exist), threads splitting the output rows.
void max_pool2d_nchwc(Isa isa, const PoolShape& s, int64_t blocks, const float* x, float* y, int threads);
// The average pool in NCHWc, split the same way: each output the mean of its window's
// taps inside the input, or with count_include_pad inside the padded input (ONNX's
// divisors, ops/pool.cc's generic loop's bits).
void average_pool2d_nchwc(Isa isa, const PoolShape& s, bool count_include_pad, int64_t blocks, const float* x, float* y,
                          int threads);

// Defined in pool2d_<isa>.cc (strides 1 and 2); constant-initialised. The scalar
// target has none: ops/pool.cc's generic loop is its kernel.
extern const Pool2dKernel pool2d_kernels_avx2[2], pool2d_kernels_avx512[2];

}  // namespace minfer::kernels
