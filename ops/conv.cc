// Conv: im2col + GEMM for any stride, padding, dilation and group; 1x1 convolutions
// with unit stride and no padding skip im2col (the input already is the column matrix).
#include <fmt/format.h>

#include "ops/op.h"
#include "ops/reference/gemm.h"
#include "ops/reference/im2col.h"
#include "ops/window.h"

namespace minfer {
namespace {

struct ConvGeometry {
  int64_t batch = 0, cin = 0, h = 0, w = 0, cout = 0, out_h = 0, out_w = 0, group = 1;
  Window2d win;
  bool has_bias = false;

  int64_t cin_per_group() const { return cin / group; }
  int64_t cout_per_group() const { return cout / group; }
  int64_t col_rows() const { return cin_per_group() * win.kh * win.kw; }
  bool needs_im2col() const {
    return !(win.kh == 1 && win.kw == 1 && win.sh == 1 && win.sw == 1 && win.pad_top == 0 && win.pad_left == 0 &&
             win.pad_bottom == 0 && win.pad_right == 0);
  }
};

class ConvOp final : public Op {
 public:
  explicit ConvOp(const Node& node) {
    node.attrs.check_known({"kernel_shape", "strides", "dilations", "pads", "auto_pad", "group"});
    attrs_ = parse_window_attrs(node.attrs);
    group_ = node.attrs.get_int("group", 1);
    if (group_ <= 0) throw OpError(fmt::format("attribute 'group' must be positive, got {}", group_));
  }

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    ConvGeometry g = geometry(in);
    return {window_output_shape(in[0].shape, g.cout, g.out_h, g.out_w)};
  }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    ConvGeometry g = geometry(in);
    Cost c = data_movement(in, out);
    c.macs = g.batch * g.win.kh * g.win.kw * g.cin_per_group() * g.out_h * g.out_w * g.cout;
    c.flops = 2 * c.macs;
    return c;
  }

  std::string kind(const ArgInfos& in) const override {
    ConvGeometry g = geometry(in);
    if (g.group > 1 && g.group == g.cin) return "depthwise";
    if (g.group > 1) return "grouped";
    if (g.win.kh == 1 && g.win.kw == 1) return "pointwise";
    return "regular";
  }

  int64_t workspace_bytes(const ArgInfos& in, const std::vector<Shape>&, int) const override {
    ConvGeometry g = geometry(in);
    return g.needs_im2col() ? 4 * g.col_rows() * g.out_h * g.out_w : 0;
  }

  void prepare(const ArgInfos& in, const std::vector<Shape>&) override { geo_ = geometry(in); }

  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float> workspace) const override {
    const ConvGeometry& g = geo_;
    const float* x = in[0].data;
    const float* weights = in[1].data;
    const float* bias = g.has_bias ? in[2].data : nullptr;
    float* y = out[0].data;
    const int64_t out_hw = g.out_h * g.out_w;
    const int64_t m = g.cout_per_group(), k = g.col_rows();
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t grp = 0; grp < g.group; ++grp) {
        const float* xg = x + (n * g.cin + grp * g.cin_per_group()) * g.h * g.w;
        const float* col = xg;
        if (g.needs_im2col()) {
          reference::im2col(xg, g.cin_per_group(), g.h, g.w, g.win, g.out_h, g.out_w, workspace.data());
          col = workspace.data();
        }
        float* yg = y + (n * g.cout + grp * m) * out_hw;
        reference::gemm(false, false, m, out_hw, k, 1.0f, weights + grp * m * k, k, col, out_hw, 0.0f, yg, out_hw);
        if (bias) {
          for (int64_t oc = 0; oc < m; ++oc) {
            const float b = bias[grp * m + oc];
            float* row = yg + oc * out_hw;
            for (int64_t i = 0; i < out_hw; ++i) row[i] += b;
          }
        }
      }
    }
  }

 private:
  ConvGeometry geometry(const ArgInfos& in) const {
    check_input_count(in, 2, 3);
    const Shape& x = in[0].shape;
    const Shape& w = in[1].shape;
    ConvGeometry g;
    spatial_dims_2d(x, g.h, g.w);
    if (w.size() != x.size())
      throw OpError(fmt::format("weights {} must have the rank of the input {}", shape_str(w), shape_str(x)));
    g.batch = x[0];
    g.cin = x[1];
    g.cout = w[0];
    g.group = group_;
    if (g.cin % g.group != 0)
      throw OpError(fmt::format("group {} does not divide the {} input channels", g.group, g.cin));
    if (g.cout % g.group != 0)
      throw OpError(fmt::format("group {} does not divide the {} output channels", g.group, g.cout));
    if (w[1] != g.cin / g.group)
      throw OpError(fmt::format("weights {} expect {} input channels per group, the input has {} (group {})",
                                shape_str(w), w[1], g.cin / g.group, g.group));
    std::vector<int64_t> kernel(w.begin() + 2, w.end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel)
      throw OpError(fmt::format("attribute 'kernel_shape' {} disagrees with weights {}",
                                shape_str(attrs_.kernel_shape), shape_str(w)));
    Shape spatial(x.begin() + 2, x.end());
    g.win = resolve_window(attrs_, spatial, kernel);
    g.out_h = window_output_size(g.h, g.win.kh, g.win.sh, g.win.dh, g.win.pad_top, g.win.pad_bottom, false);
    g.out_w = window_output_size(g.w, g.win.kw, g.win.sw, g.win.dw, g.win.pad_left, g.win.pad_right, false);
    g.has_bias = in.size() == 3 && in[2].present;
    if (g.has_bias && in[2].shape != Shape{g.cout})
      throw OpError(fmt::format("bias {} must have shape {}", shape_str(in[2].shape), g.cout));
    return g;
  }

  WindowAttrs attrs_;
  int64_t group_ = 1;
  ConvGeometry geo_;
};

}  // namespace

std::unique_ptr<Op> make_conv(const Node& node) { return std::make_unique<ConvOp>(node); }

}  // namespace minfer
