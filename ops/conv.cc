// Conv, with the kernel chosen once per node: a direct depthwise kernel when group
// equals the input channels (the SIMD one for the windows it covers, see
// ops/kernels/depthwise_conv.h, else the scalar one: any channel multiplier), a direct
// SIMD convolution when there are few input channels (ops/kernels/direct_conv.h: the
// RGB first layer), a direct GEMM over the input for 1x1 convolutions with unit stride
// and no padding, and im2col + GEMM otherwise, both on the packed SGEMM with the weights
// packed in prepare() and im2col fused into the GEMM's B packing (ops/kernels/conv_gemm.h).
// A fused activation (the fuse_activations pass) runs in every kernel's epilogue.
#include <fmt/format.h>

#include "ops/kernels/conv_gemm.h"
#include "ops/kernels/depthwise_conv.h"
#include "ops/kernels/direct_conv.h"
#include "ops/op.h"
#include "ops/reference/depthwise_conv.h"
#include "ops/window.h"

namespace minfer {
namespace {

struct ConvGeometry : reference::Conv2dShape {
  int64_t batch = 0;
  bool has_bias = false;
};

enum class ConvKernel { kIm2col, kPointwise, kDepthwise, kDepthwiseSimd, kDirectSimd };

ConvKernel choose_kernel(const ConvGeometry& g) {
  if (g.group > 1 && g.group == g.cin)
    return kernels::find_depthwise_kernel(g) ? ConvKernel::kDepthwiseSimd : ConvKernel::kDepthwise;
  if (kernels::find_direct_conv_kernel(g)) return ConvKernel::kDirectSimd;
  return kernels::is_pointwise(g) ? ConvKernel::kPointwise : ConvKernel::kIm2col;
}

const char* kernel_name(ConvKernel k) {
  switch (k) {
    case ConvKernel::kDepthwise: return "depthwise_direct";
    case ConvKernel::kDepthwiseSimd: return "depthwise_simd";
    case ConvKernel::kDirectSimd: return "direct_simd";
    case ConvKernel::kPointwise: return "pointwise_gemm";
    case ConvKernel::kIm2col: return "im2col_gemm";
  }
  return "";
}

class ConvOp final : public Op {
 public:
  explicit ConvOp(const Node& node) {
    Attributes attrs = node.attrs;
    activation_ = take_fused_activation(attrs);
    attrs.check_known({"kernel_shape", "strides", "dilations", "pads", "auto_pad", "group"});
    attrs_ = parse_window_attrs(attrs);
    group_ = attrs.get_int("group", 1);
    if (group_ <= 0) throw OpError(fmt::format("attribute 'group' must be positive, got {}", group_));
  }

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    ConvGeometry g = geometry(in);
    return {window_output_shape(in[0].shape, g.cout, g.out_h, g.out_w)};
  }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    ConvGeometry g = geometry(in);
    Cost c = data_movement(in, out);
    c.macs = checked_mul({g.batch, g.win.kh, g.win.kw, g.cin_per_group(), g.out_h, g.out_w, g.cout});
    c.flops = checked_add(
        {checked_mul({2, c.macs}), checked_mul({activation_.flops_per_element(), g.batch, g.cout, g.out_h, g.out_w})});
    return c;
  }

  std::string kind(const ArgInfos& in) const override {
    ConvGeometry g = geometry(in);
    if (g.group > 1 && g.group == g.cin) return "depthwise";
    if (g.group > 1) return "grouped";
    if (g.win.kh == 1 && g.win.kw == 1) return "pointwise";
    return "regular";
  }

  nlohmann::json details(const ArgInfos& in, const std::vector<Shape>&) const override {
    ConvGeometry g = geometry(in);
    const ConvKernel k = choose_kernel(g);
    nlohmann::json d = {{"kernel", kernel_name(k)}};
    if (k == ConvKernel::kDepthwise) d["multiplier"] = g.cout / g.cin;
    if (k == ConvKernel::kDepthwiseSimd) d["variant"] = kernels::find_depthwise_kernel(g)->name;
    if (k == ConvKernel::kDirectSimd) d["variant"] = kernels::find_direct_conv_kernel(g)->name;
    if (k == ConvKernel::kIm2col || k == ConvKernel::kPointwise) {
      d["gemm_kernel"] = kernels::active_gemm_kernel().name;
      d["prepacked"] = in[1].constant ? "weights" : "none";
      if (k == ConvKernel::kIm2col) d["im2col"] = "into the GEMM's B panels";
    }
    if (activation_.kind != ActivationKind::kNone) d["fused_activation"] = activation_name(activation_);
    return d;
  }

  int64_t workspace_bytes(const ArgInfos& in, const std::vector<Shape>&, int threads) const override {
    ConvGeometry g = geometry(in);
    switch (choose_kernel(g)) {
      case ConvKernel::kIm2col:
      case ConvKernel::kPointwise:
        return checked_mul({4, kernels::conv_gemm_workspace_floats(g, in[1].constant != nullptr, threads)});
      case ConvKernel::kDepthwiseSimd:
        return checked_mul(
            {4, kernels::depthwise_workspace_floats(*kernels::find_depthwise_kernel(g), g, g.batch, threads)});
      case ConvKernel::kDirectSimd:
        return checked_mul(
            {4, kernels::direct_conv_workspace_floats(*kernels::find_direct_conv_kernel(g), g, g.batch, threads)});
      default: return 0;
    }
  }

  void prepare(const ArgInfos& in, const std::vector<Shape>&) override {
    geo_ = geometry(in);
    kernel_ = choose_kernel(geo_);
    depthwise_ = kernels::find_depthwise_kernel(geo_);
    direct_ = kernels::find_direct_conv_kernel(geo_);
    if (kernel_ == ConvKernel::kIm2col || kernel_ == ConvKernel::kPointwise)
      gemm_ = kernels::ConvGemm(geo_, in[1].constant ? in[1].constant->data.data() : nullptr);
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float> workspace) const override {
    const ConvGeometry& g = geo_;
    const float* x = in[0].data;
    const float* weights = in[1].data;
    const float* bias = g.has_bias ? in[2].data : nullptr;
    float* y = out[0].data;
    switch (kernel_) {
      case ConvKernel::kDepthwiseSimd:
        kernels::depthwise_conv2d(*depthwise_, g, g.batch, x, weights, bias, y, workspace, ctx.num_threads,
                                  activation_);
        break;
      case ConvKernel::kDirectSimd:
        kernels::direct_conv2d(*direct_, g, g.batch, x, weights, bias, y, workspace, ctx.num_threads, activation_);
        break;
      case ConvKernel::kIm2col:
      case ConvKernel::kPointwise:
        gemm_.run(g.batch, x, weights, bias, activation_, y, workspace, ctx.num_threads);
        break;
      case ConvKernel::kDepthwise: {
        // The scalar kernel has no epilogue: the activation is a second pass over each
        // image's output while it is still in cache.
        const int64_t in_image = g.cin * g.h * g.w, out_image = g.cout * g.out_h * g.out_w;
        for (int64_t n = 0; n < g.batch; ++n) {
          reference::depthwise_conv2d(g, x + n * in_image, weights, bias, y + n * out_image);
          activation_.apply(y + n * out_image, out_image);
        }
        break;
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
      throw OpError(fmt::format("attribute 'kernel_shape' {} disagrees with weights {}", shape_str(attrs_.kernel_shape),
                                shape_str(w)));
    Shape spatial(x.begin() + 2, x.end());
    g.win = resolve_window(attrs_, spatial, kernel);
    g.out_h = window_output_size(g.h, g.win.kh, g.win.sh, g.win.dh, g.win.pad_top, g.win.pad_bottom, false);
    g.out_w = window_output_size(g.w, g.win.kw, g.win.sw, g.win.dw, g.win.pad_left, g.win.pad_right, false);
    g.has_bias = in.size() == 3 && in[2].present;
    if (g.has_bias && in[2].shape != Shape{g.cout})
      throw OpError(fmt::format("bias {} must have shape {}", shape_str(in[2].shape), g.cout));
    return g;
  }

  Activation activation_;  // fused by the fuse_activations pass
  WindowAttrs attrs_;
  int64_t group_ = 1;
  ConvGeometry geo_;
  ConvKernel kernel_ = ConvKernel::kIm2col;
  const kernels::DepthwiseKernel* depthwise_ = nullptr;
  const kernels::DirectConvKernel* direct_ = nullptr;
  kernels::ConvGemm gemm_;  // im2col and pointwise: the weights packed per group
};

}  // namespace

std::unique_ptr<Op> make_conv(const Node& node) {
  return std::make_unique<ConvOp>(node);
}

}  // namespace minfer
