// Direct convolution in the blocked layout NCHWc (c = the vector's lanes: 16 on AVX-512,
// 8 on AVX2), for the regular and grouped convolutions where it is faster than im2col +
// GEMM (the shapes are chosen by measurement, see docs/performance.md). The weights are
// packed once, [output blocks][input blocks of the group][kh][kw][c in][c out]; each call
// reorders the NCHW input into a zero-bordered NCHWc copy in the workspace (so the
// micro-kernel has no bounds checks; an input of fewer than c channels is one block of
// just those, with no zero lanes to multiply), and computes the output by items of F
// output blocks x a band of output rows, summed in NCHWc in a thread's scratch then
// reordered into the NCHW output with the activation. The micro-kernel holds F output blocks x
// P output pixels of one output row in registers (F weight vectors, P broadcast inputs,
// F*P multiply-adds per input channel); any stride and dilation. The input channels are
// summed in chunks whose weights stay in L2, the partial sums kept in the NCHWc output.
//
//   if (kernels::blocked_conv_applies(shape, isa)) {
//     kernels::BlockedConv conv(shape, weights, isa);
//     workspace: conv.workspace_floats(batch, threads) floats
//     conv.run(batch, x, bias, activation, y, workspace, threads);
//   }
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "ops/activation.h"
#include "ops/window.h"
#include "profiler/isa.h"

namespace minfer::kernels {

// The work of one call of a kernel's row function: `blocks` (<= max_blocks) output
// blocks of one output row, summed over `cin_blocks` input blocks.
struct BlockedConvRow {
  const float* x;              // NCHWc input at the first summed block, the row's top window row, column 0
  int64_t cin_lanes;           // input channels per input block (the c of the input's layout)
  int64_t x_block;             // floats between input blocks
  int64_t x_row;               // floats between padded input rows
  int64_t cin_blocks;          // input blocks summed
  const float* w;              // packed weights of the first output block at the first summed input block
  int64_t w_block;             // floats between output blocks' weights
  const float* init;           // blocks * c initial sums (the bias), or null: add to what `out` holds
  bool init_adds_out = false;  // with init: start from what `out` holds plus init (a residual there)
  // Applied on the registers before the store (the last chunk of input blocks), or null.
  // Only kinds activation_in_registers() takes.
  const Activation* activation = nullptr;
  float* out;         // NCHWc output of the first block at the row's first column
  int64_t out_block;  // floats between output blocks
  int64_t out_w, sw, kh, kw, dh, dw;
  int blocks;
};

struct BlockedConvKernel {
  const char* name;  // blocked_conv_f32_<blocks>x<pixels>_<isa>: its largest register tile
  Isa isa;
  int lanes;       // c
  int max_blocks;  // F
  void (*run_row)(const BlockedConvRow& row);
};

// The kernel of one target (nullptr for the scalar one or a target the CPU cannot run).
const BlockedConvKernel* blocked_conv_kernel(Isa isa);

// The layouts of a blocked convolution's input and output: NCHW, or NCHWc ([N, C / c, H,
// W, c], c the kernel's lanes), which needs the tensor's channels to be a multiple of c.
// An NCHWc input is copied only to add its zero border (not at all without padding); an
// NCHWc output is summed in place, with no reorder.
struct BlockedLayouts {
  bool input_blocked = false, output_blocked = false;
};

// Whether the blocked kernel can run s on isa with these layouts: a kernel exists for
// isa, the groups are whole blocks (group 1 with any channel counts, padded with zeros;
// or input and output channels per group multiples of c), and the channels of an NCHWc
// input or output are a multiple of c. Whether it is chosen is Conv's decision.
bool blocked_conv_applies(const ConvGeometry& s, Isa isa, BlockedLayouts layouts = {});

class BlockedConv {
 public:
  BlockedConv() = default;
  // Packs the weights [cout, cin / group, kh, kw]; s must be one blocked_conv_applies to
  // with these layouts.
  BlockedConv(const ConvGeometry& s, const float* weights, Isa isa, BlockedLayouts layouts = {});

  const BlockedConvKernel& kernel() const { return *kernel_; }
  // Floats of workspace run needs for `batch` images on up to `threads` threads.
  int64_t workspace_floats(int64_t batch, int threads) const;
  // Floats of the NCHWc input copy of one image, with its border (shared by the
  // threads); 0 when an NCHWc input without padding is read as it is.
  int64_t input_floats() const;
  // Floats of one thread's NCHWc partial sums: F output blocks (fewer if a group has
  // fewer) x band_rows() output rows; 0 when the output is NCHWc (summed in place).
  int64_t band_floats() const;
  int64_t band_rows() const { return band_rows_; }
  // Input channels summed per pass over the output (the weights' L2 blocking).
  int64_t chunk_blocks() const { return chunk_blocks_; }
  // Input channels per block of the NCHWc input copy: c, or the input's channels when
  // it has fewer (group 1), so no zero lanes are multiplied.
  int64_t input_lanes() const { return in_lanes_; }

  // y[n] = act(bias + weights (*) x[n] + residual[n]) for `batch` images, x and y in the
  // layouts the constructor was given; bias and residual (laid out as y) may be null. Each output element is summed by
  // one thread in a fixed order, so y does not depend on `threads`.
  void run(int64_t batch, const float* x, const float* bias, const Activation& act, float* y,
           std::span<float> workspace, int threads, const float* residual = nullptr) const;

 private:
  int64_t items() const;  // the units of work threads share
  int64_t tile_blocks() const { return std::min<int64_t>(kernel_->max_blocks, out_blocks_); }
  int team(int64_t batch, int threads) const;
  bool copies_input() const;

  ConvGeometry s_;
  BlockedLayouts layouts_;
  const BlockedConvKernel* kernel_ = nullptr;
  int64_t in_lanes_ = 0;                    // input channels per input block
  int64_t in_blocks_ = 0, out_blocks_ = 0;  // per group
  int64_t chunk_blocks_ = 0, band_rows_ = 0;
  std::vector<float> weights_;
};

// Defined in blocked_conv_<isa>.cc; constant-initialised.
extern const BlockedConvKernel blocked_conv_f32_2x6_avx2, blocked_conv_f32_4x7_avx512;

}  // namespace minfer::kernels
