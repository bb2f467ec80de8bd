// Pooling: MaxPool, AveragePool (1-D and 2-D windows) and the global pools.
// FLOPs: output elements x window size (the seed's count). MaxPool and AveragePool run
// the SIMD kernels of ops/kernels/pool2d.h where they apply (horizontal stride 1 or 2,
// no horizontal dilation), the generic loop below otherwise; both give the same bits.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/blocked_layout.h"
#include "ops/kernels/plane_means.h"
#include "ops/kernels/pool2d.h"
#include "ops/kernels/threads.h"
#include "ops/op_helpers.h"
#include "ops/window.h"

namespace minfer {
namespace {

enum class PoolKind { kMax, kAverage };

// The taps [begin, end) of k taps `d` apart, from `start`, that land in [0, limit): in
// closed form, so a window far wider than its input (kernel_shape may reach 2^31 - 1)
// costs only the taps that land, not a loop over all of them.
struct Taps {
  int64_t begin = 0, end = 0;
  int64_t count() const { return end - begin; }
};
Taps taps_inside(int64_t start, int64_t k, int64_t d, int64_t limit) {
  Taps t;
  t.begin = start >= 0 ? 0 : (-start + d - 1) / d;
  t.end = std::max(t.begin, start >= limit ? 0 : std::min(k, (limit - start + d - 1) / d));
  return t;
}

// The lanes of isa's NCHWc pools for a 2-D pool's input of whole blocks of channels
// computed at run time, else 0.
int64_t pool_block_lanes(const OpSignature& sig, Isa isa) {
  const int64_t lanes = blocked_lanes(isa);
  const Shape& x = sig.inputs[0].shape();
  return lanes && x.size() == 4 && x[1] % lanes == 0 && !sig.inputs[0].constant ? lanes : 0;
}

struct PoolGeometry {
  int64_t batch = 0, channels = 0, h = 0, w = 0, out_h = 0, out_w = 0;
  Window2d win;
};

class PoolKernel final : public Kernel {
 public:
  PoolKernel(const PoolGeometry& g, PoolKind kind, bool count_include_pad, Isa isa, int64_t lanes)
      : Kernel({}), g_(g), kind_(kind), count_include_pad_(count_include_pad), lanes_(lanes), isa_(isa) {
    plane_ = {g.h, g.w, g.out_h, g.out_w, g.win};
    if (!lanes) simd_ = kernels::find_pool2d_kernel(plane_, isa);
    KernelFacts& f = mutable_facts();
    const char* pool = kind == PoolKind::kMax ? "max_pool" : "average_pool";
    f.kernel = lanes   ? fmt::format("{}_nchwc", pool)
               : simd_ ? fmt::format("{}_simd", pool)
                       : std::string("pool_generic");
    if (lanes) f.details["variant"] = fmt::format("{}_f32_nchw{}c_{}", pool, lanes, isa_name(isa));
    if (lanes) f.details["tensor_layouts"] = fmt::format("{} -> {}", layout_name(lanes), layout_name(lanes));
    if (simd_) {
      f.details["variant"] = fmt::format("{}_f32_s{}_{}", pool, simd_->stride, isa_name(simd_->isa));
      f.thread_scratch_bytes = checked_mul({4, kernels::pool2d_thread_floats(*simd_, plane_)});
    }
    // Window columns kj with 0 <= ox * sw - pad_left + kj * dw < w, in closed form (the
    // window can be as wide as the cost's overflow check lets it be). An average's divisor
    // is its window's rows times its columns that count (inside the input, or with
    // count_include_pad inside the padded input): the columns' per output column here, as
    // floats (exact: the counts are small integers), the rows' once per output row.
    const Window2d& win = g.win;
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      const int64_t start = ox * win.sw - win.pad_left;
      const int64_t first = start >= 0 ? 0 : (-start + win.dw - 1) / win.dw;
      const int64_t last = start > g.w - 1 ? -1 : std::min(win.kw - 1, (g.w - 1 - start) / win.dw);
      const int64_t inside = std::max<int64_t>(0, last - first + 1);
      divisor_columns_.push_back(static_cast<float>(
          count_include_pad ? taps_inside(ox * win.sw, win.kw, win.dw, g.w + win.pad_left + win.pad_right).count()
                            : inside));
    }
    // Each window column that lands inside the input for some output column: the output
    // columns [lo, hi) for which it does, where it reads input column ox * sw + offset.
    const int64_t last_start = (g.out_w - 1) * win.sw - win.pad_left;
    const Taps columns = taps_inside(last_start, win.kw, win.dw, g.w + (g.out_w - 1) * win.sw);
    for (int64_t kj = columns.begin; kj < columns.end; ++kj) {
      const int64_t offset = kj * win.dw - win.pad_left;
      const int64_t lo = offset >= 0 ? 0 : (-offset + win.sw - 1) / win.sw;
      const int64_t hi = std::min(g.out_w, g.w - 1 - offset < 0 ? 0 : (g.w - 1 - offset) / win.sw + 1);
      if (lo < hi) column_runs_.push_back({offset, lo, hi});
    }
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           Workspace workspace) const override {
    const PoolGeometry& g = g_;
    const int64_t planes = g.batch * g.channels;
    if (lanes_ && kind_ == PoolKind::kAverage)
      return kernels::average_pool2d_nchwc(isa_, plane_, count_include_pad_, planes / lanes_, in[0].f32(), out[0].f32(),
                                           ctx.num_threads);
    if (lanes_)
      return kernels::max_pool2d_nchwc(isa_, plane_, planes / lanes_, in[0].f32(), out[0].f32(), ctx.num_threads);
    if (simd_ && kind_ == PoolKind::kAverage)
      return kernels::average_pool2d(*simd_, plane_, count_include_pad_, planes, in[0].f32(), out[0].f32(),
                                     workspace.threads(), ctx.num_threads);
    if (simd_)
      return kernels::max_pool2d(*simd_, plane_, planes, in[0].f32(), out[0].f32(), workspace.threads(),
                                 ctx.num_threads);
    const int threads = kernels::threads_worth_starting(num_elements(out[0].shape()) * g.win.kh * g.win.kw, planes,
                                                        ctx.num_threads, kernels::Work::kStreaming);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const float* x = in[0].f32() + plane * g.h * g.w;
      float* y = out[0].f32() + plane * g.out_h * g.out_w;
      if (kind_ == PoolKind::kMax)
        pool_plane<PoolKind::kMax>(x, y);
      else
        pool_plane<PoolKind::kAverage>(x, y);
    }
  }

 private:
  // One output row at a time: each window row and column that falls inside the input
  // adds its contribution to the whole row, over the range of outputs for which it is
  // inside, so the inner loop has no bounds checks (and vectorises at unit stride).
  template <PoolKind kKind>
  void pool_plane(const float* x, float* y) const {
    const PoolGeometry& g = g_;
    const Window2d& w = g.win;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
      float* yr = y + oy * g.out_w;
      std::fill(yr, yr + g.out_w, kKind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
      const Taps rows = taps_inside(oy * w.sh - w.pad_top, w.kh, w.dh, g.h);  // window rows inside the input
      for (int64_t ki = rows.begin; ki < rows.end; ++ki) {
        const int64_t iy = oy * w.sh - w.pad_top + ki * w.dh;
        const float* xr = x + iy * g.w;
        for (const ColumnRun& c : column_runs_) {
          if (w.sw == 1)  // unit stride: a loop the compiler vectorises
            for (int64_t ox = c.lo; ox < c.hi; ++ox) yr[ox] = add_tap<kKind>(yr[ox], xr[ox + c.offset]);
          else
            for (int64_t ox = c.lo; ox < c.hi; ++ox) yr[ox] = add_tap<kKind>(yr[ox], xr[ox * w.sw + c.offset]);
        }
      }
      if constexpr (kKind == PoolKind::kAverage) {
        // count_include_pad: the divisor counts explicit padding but not the overhang that
        // ceil_mode adds past it (ONNX and PyTorch agree on this): taps inside [-pad_begin,
        // size + pad_end), where every window starts.
        const auto divisor_rows = static_cast<float>(
            count_include_pad_ ? taps_inside(oy * w.sh, w.kh, w.dh, g.h + w.pad_top + w.pad_bottom).count()
                               : rows.count());
        const float* columns = divisor_columns_.data();
        for (int64_t ox = 0; ox < g.out_w; ++ox) yr[ox] /= divisor_rows * columns[ox];
      }
    }
  }

  template <PoolKind kKind>
  static float add_tap(float acc, float v) {
    return kKind == PoolKind::kMax ? nan_max(acc, v) : acc + v;
  }

  const PoolGeometry g_;
  const PoolKind kind_;
  const bool count_include_pad_;
  const int64_t lanes_;  // NCHWc's c, 0 for NCHW
  const Isa isa_;
  kernels::PoolShape plane_;                     // one plane's geometry, for the SIMD kernel
  const kernels::Pool2dKernel* simd_ = nullptr;  // null: the generic loop
  struct ColumnRun {
    int64_t offset, lo, hi;
  };
  std::vector<float> divisor_columns_;  // per output column: the columns an average divides by
  std::vector<ColumnRun> column_runs_;  // per window column inside the input for some output column
};

class PoolOp final : public Op {
 public:
  PoolOp(const Node& node, PoolKind kind) : kind_(kind) {
    if (kind == PoolKind::kMax) {
      node.attrs.check_known({"kernel_shape", "strides", "dilations", "pads", "auto_pad", "ceil_mode", "storage_order",
                              kBlockedInputAttr, kBlockedOutputAttr});
      if (node.attrs.get_int("storage_order", 0) != 0) throw UnsupportedError("storage_order=1 is not supported");
    } else {
      node.attrs.check_known({"kernel_shape", "strides", "dilations", "pads", "auto_pad", "ceil_mode",
                              "count_include_pad", kBlockedInputAttr, kBlockedOutputAttr});
      count_include_pad_ = node.attrs.get_int("count_include_pad", 0) != 0;
    }
    // Set by blocked_layout: input and output NCHWc.
    lanes_ = node.attrs.get_int(kBlockedInputAttr, 0);
    if (lanes_ != node.attrs.get_int(kBlockedOutputAttr, 0))
      throw OpError("attributes 'blocked_input' and 'blocked_output' must be equal");
    attrs_ = parse_window_attrs(node.attrs);
    if (attrs_.kernel_shape.empty()) throw OpError("attribute 'kernel_shape' is required");
    // A pad as wide as the kernel leaves windows of padding alone: a max of nothing
    // (-inf), an average over no values (NaN). onnxruntime refuses it too.
    if (attrs_.pads.size() == 2 * attrs_.kernel_shape.size())
      for (size_t i = 0; i < attrs_.pads.size(); ++i)
        if (const int64_t k = attrs_.kernel_shape[i % attrs_.kernel_shape.size()]; attrs_.pads[i] >= k)
          throw OpError(
              fmt::format("attribute 'pads' value {} must be smaller than the kernel size {}", attrs_.pads[i], k));
    if (node.outputs.size() > 1) throw UnsupportedError("the Indices output is not supported");
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const PoolGeometry g = geometry(in);
    if (lanes_) return {{DType::kFloat32, blocked_shape({g.batch, g.channels, g.out_h, g.out_w}, lanes_)}};
    return {{DType::kFloat32, window_output_shape(in[0].shape(), g.channels, g.out_h, g.out_w)}};
  }

  OpCost cost(const OpSignature& sig) const override {
    const PoolGeometry g = geometry(sig.inputs);
    return op_cost(*this, sig, 0,
                   CostExpr::of("output elements", num_elements(sig.outputs[0].shape())) *
                       CostExpr::of("K_h", g.win.kh) * CostExpr::of("K_w", g.win.kw));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    if (lanes_ && lanes_ != blocked_lanes(ctx.isa))
      throw UnsupportedError(
          fmt::format("the {} layout has no pool kernel on {}", layout_name(lanes_), isa_name(ctx.isa)));
    return std::make_unique<PoolKernel>(geometry(sig.inputs), kind_, count_include_pad_, ctx.isa, lanes_);
  }

  // A 2-D pool over channels in whole blocks: one vector max or sum per tap and C
  // channels, where the NCHW kernels take a plane at a time (the average's generic loop
  // took Inception V3's 17x17 pools 8-10x ORT's NCHWc time).
  BlockedLayoutSupport blocked_layout(const OpSignature& sig, Isa isa) const override {
    BlockedLayoutSupport s;
    s.lanes = pool_block_lanes(sig, isa);
    s.input = s.output = s.preferred = s.same_layout = s.lanes > 0;
    return s;
  }

 private:
  PoolGeometry geometry(std::span<const OpInput> in) const {
    check_input_count(in, 1, 1);
    require_float(in);
    const Shape x = lanes_ ? unblocked_shape(in[0].shape(), lanes_) : in[0].shape();
    PoolGeometry g;
    spatial_dims_2d(x, g.h, g.w);
    g.batch = x[0];
    g.channels = x[1];
    g.win = resolve_window(attrs_, Shape(x.begin() + 2, x.end()), attrs_.kernel_shape);
    g.out_h = window_output_size(g.h, g.win.kh, g.win.sh, g.win.dh, g.win.pad_top, g.win.pad_bottom, attrs_.ceil_mode);
    g.out_w = window_output_size(g.w, g.win.kw, g.win.sw, g.win.dw, g.win.pad_left, g.win.pad_right, attrs_.ceil_mode);
    return g;
  }

  PoolKind kind_;
  bool count_include_pad_ = false;
  WindowAttrs attrs_;
  int64_t lanes_ = 0;  // NCHWc's c for an NCHWc MaxPool, 0 for NCHW
};

// Global pools reduce each channel plane to one value: FLOPs = input elements.
class GlobalPoolOp final : public Op {
 public:
  GlobalPoolOp(const Node& node, PoolKind kind) : kind_(kind) {
    node.attrs.check_known({kBlockedInputAttr});
    // Set by blocked_layout: the input is NCHWc (the output [N, C, 1, 1] is NCHW).
    lanes_ = node.attrs.get_int(kBlockedInputAttr, 0);
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    require_float(in);
    const Shape x = lanes_ ? unblocked_shape(in[0].shape(), lanes_) : in[0].shape();
    if (x.size() < 3) throw OpError(fmt::format("input must be at least 3-D [N,C,...], got {}", shape_str(x)));
    Shape y = x;
    std::fill(y.begin() + 2, y.end(), 1);
    return {{DType::kFloat32, y}};
  }

  OpCost cost(const OpSignature& sig) const override {
    return op_cost(*this, sig, 0, CostExpr::of("input elements", num_elements(sig.inputs[0].shape())));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    if (lanes_ && lanes_ != blocked_lanes(ctx.isa))
      throw UnsupportedError(
          fmt::format("the {} layout has no global pool on {}", layout_name(lanes_), isa_name(ctx.isa)));
    if (lanes_) {
      const Shape x = unblocked_shape(sig.inputs[0].shape(), lanes_);
      return make_kernel(
          {}, [kind = kind_, ctx, lanes = lanes_, blocks = x[0] * x[1] / lanes_, size = x[2] * x[3]](
                  const RunContext& run, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
            if (kind == PoolKind::kAverage)
              return kernels::blocked_plane_means(ctx.isa, in[0].f32(), blocks, size, out[0].f32(), run.num_threads);
            const int team = kernels::threads_worth_starting(blocks * size * lanes, blocks, run.num_threads,
                                                             kernels::Work::kStreaming);
            kernels::for_each_on_team(team, blocks, [&](int64_t b) {
              max_block(in[0].f32() + b * size * lanes, size, lanes, out[0].f32() + b * lanes);
            });
          });
    }
    return make_kernel({}, [kind = kind_, ctx](const RunContext&, std::span<const TensorView> in,
                                               std::span<const TensorView> out, Workspace) {
      const Shape& x = in[0].shape();
      const int64_t planes = x[0] * x[1];
      const int64_t size = planes == 0 ? 0 : in[0].size() / planes;
      if (kind == PoolKind::kAverage)
        return kernels::plane_means(ctx.isa, in[0].f32(), planes, size, out[0].f32(), ctx.num_threads);
      for (int64_t p = 0; p < planes; ++p) {
        const float* src = in[0].f32() + p * size;
        float m = src[0];
        for (int64_t i = 1; i < size; ++i) m = nan_max(m, src[i]);
        out[0].f32()[p] = m;
      }
    });
  }

  // A 2-D global pool reads NCHWc where its input is (the last layer of a region, a
  // squeeze-and-excitation gate's input), sparing a Reorder: its output, one value a
  // channel, is NCHW.
  BlockedLayoutSupport blocked_layout(const OpSignature& sig, Isa isa) const override {
    BlockedLayoutSupport s;
    s.lanes = pool_block_lanes(sig, isa);
    s.input = s.preferred = s.weak_input = s.lanes > 0;
    return s;
  }

 private:
  // One block of `lanes` channels of `size` pixels: each channel's maximum, nan_max in
  // pixel order as the NCHW loop, all lanes at once (contiguous: the compiler vectorises).
  static void max_block(const float* x, int64_t size, int64_t lanes, float* y) {
    std::copy_n(x, lanes, y);
    for (int64_t i = 1; i < size; ++i)
      for (int64_t l = 0; l < lanes; ++l) y[l] = nan_max(y[l], x[i * lanes + l]);
  }

  PoolKind kind_;
  int64_t lanes_ = 0;  // NCHWc's c of the input, 0 for NCHW
};

}  // namespace

std::unique_ptr<Op> make_max_pool(const Node& node) {
  return std::make_unique<PoolOp>(node, PoolKind::kMax);
}
std::unique_ptr<Op> make_average_pool(const Node& node) {
  return std::make_unique<PoolOp>(node, PoolKind::kAverage);
}
std::unique_ptr<Op> make_global_average_pool(const Node& node) {
  return std::make_unique<GlobalPoolOp>(node, PoolKind::kAverage);
}
std::unique_ptr<Op> make_global_max_pool(const Node& node) {
  return std::make_unique<GlobalPoolOp>(node, PoolKind::kMax);
}

}  // namespace minfer
