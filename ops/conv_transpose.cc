// ConvTranspose (deconvolution) with ONNX semantics, 1-D and 2-D, by either of the seed
// notes' two methods, chosen per node by the engine attribute "method":
//  - "col2im" (the default): per group one GEMM W^T x X gives every input pixel's
//    contribution to its Kh x Kw output window, and col2im scatter-adds them into the
//    output. Kh*Kw*Cin*(Cout/group)*Hin*Win MACs: every product is a real one.
//  - "conv": insert stride-1 zeros between the input pixels, pad, and run a regular
//    convolution with the kernel flipped and its channel axes swapped.
//    Kh*Kw*(Cin/group)*Cout*Hout*Wout MACs, about stride_h*stride_w times as many,
//    since most of them multiply inserted zeros.
// col2im is the default: it skips the zeros (on models/deconv_decoder.json a quarter of
// the MACs); its scratch is one group's columns (Cout/group*Kh*Kw x Hin*Win), the conv
// method's the zero-inserted input (its im2col goes straight into the GEMM's panels).
// Both run on the packed SGEMM with the (constant) weights packed in prepare(): col2im's
// W^T x X, and the conv method through Conv's kernel (ops/kernels/conv_gemm.h, im2col
// fused into the GEMM's packing). A fused activation runs after the bias: in the GEMM's
// epilogue for the conv method, after the scatter for col2im (only then is a sum final).
#include <fmt/format.h>

#include <algorithm>

#include "ops/kernels/conv_gemm.h"
#include "ops/kernels/gemm.h"
#include "ops/kernels/threads.h"
#include "ops/op.h"
#include "ops/reference/col2im.h"
#include "ops/reference/conv2d.h"
#include "ops/window.h"

namespace minfer {
namespace {

enum class DeconvMethod { kCol2im, kConv };

struct DeconvGeometry {
  int64_t batch = 0, cin = 0, h = 0, w = 0, cout = 0, out_h = 0, out_w = 0, group = 1;
  Window2d win;  // the scatter: input i reaches output i * stride - pad_begin + k * dilation
  bool has_bias = false;

  int64_t cin_per_group() const { return cin / group; }
  int64_t cout_per_group() const { return cout / group; }
  int64_t kernel_size() const { return checked_mul({win.kh, win.kw}); }
  bool strided() const { return win.sh > 1 || win.sw > 1; }

  int64_t col2im_macs() const { return checked_mul({batch, kernel_size(), cin, cout_per_group(), h, w}); }
  int64_t conv_macs() const { return checked_mul({batch, kernel_size(), cin_per_group(), cout, out_h, out_w}); }

  // The conv method's convolution: over the zero-inserted input, unit stride, the
  // same dilation, and pads that make the kernel's flipped reach land where the
  // scatter would (negative pads crop).
  reference::Conv2dShape conv_shape() const {
    reference::Conv2dShape s;
    s.cin = cin;
    s.h = checked_add({checked_mul({h - 1, win.sh}), 1});
    s.w = checked_add({checked_mul({w - 1, win.sw}), 1});
    s.cout = cout;
    s.out_h = out_h;
    s.out_w = out_w;
    s.group = group;
    s.win.kh = win.kh;
    s.win.kw = win.kw;
    s.win.dh = win.dh;
    s.win.dw = win.dw;
    s.win.pad_top = win.dh * (win.kh - 1) - win.pad_top;
    s.win.pad_left = win.dw * (win.kw - 1) - win.pad_left;
    s.win.pad_bottom = out_h - s.h - s.win.pad_top + win.dh * (win.kh - 1);
    s.win.pad_right = out_w - s.w - s.win.pad_left + win.dw * (win.kw - 1);
    return s;
  }

  // Workspace floats. col2im: one group's columns, then the GEMM's packing scratch.
  // conv: the flipped weights (unless constant: flipped and packed once), the
  // zero-inserted image (not needed at unit stride), then the convolution's GEMM scratch
  // (no im2col matrix: it is packed straight into the GEMM's panels).
  int64_t col2im_rows() const { return checked_mul({cout_per_group(), kernel_size()}); }
  int64_t col_floats() const { return checked_mul({col2im_rows(), h, w}); }
  int64_t col2im_workspace(bool weights_constant, int threads) const {
    return checked_add({col_floats(), kernels::gemm_workspace_bytes(
                                          kernels::active_gemm_kernel(), col2im_rows(), h * w, cin_per_group(), threads,
                                          weights_constant ? kernels::GemmPacked::kA : kernels::GemmPacked::kNone) /
                                          4});
  }
  int64_t flipped_weights() const { return checked_mul({cout, cin_per_group(), kernel_size()}); }
  int64_t zero_inserted() const {
    const reference::Conv2dShape s = conv_shape();
    return strided() ? checked_mul({cin, s.h, s.w}) : 0;
  }
  int64_t conv_workspace(bool weights_constant, int threads) const {
    return checked_add({weights_constant ? 0 : flipped_weights(), zero_inserted(),
                        kernels::conv_gemm_workspace_floats(conv_shape(), weights_constant, threads)});
  }
};

// The conv method's weights: [cin, cout / group, kh, kw] to [cout, cin / group, kh, kw]
// per group, the window flipped.
void flip_weights(const DeconvGeometry& g, const float* weights, float* flipped) {
  const int64_t cig = g.cin_per_group(), cog = g.cout_per_group(), taps = g.kernel_size();
  for (int64_t grp = 0; grp < g.group; ++grp)
    for (int64_t ic = 0; ic < cig; ++ic)
      for (int64_t oc = 0; oc < cog; ++oc) {
        const float* src = weights + ((grp * cig + ic) * cog + oc) * taps;
        float* dst = flipped + ((grp * cog + oc) * cig + ic) * taps;
        for (int64_t i = 0; i < taps; ++i) dst[taps - 1 - i] = src[i];
      }
}

const char* method_name(DeconvMethod m) {
  return m == DeconvMethod::kCol2im ? "col2im" : "conv";
}

class ConvTransposeOp final : public Op {
 public:
  explicit ConvTransposeOp(const Node& node) {
    Attributes attrs = node.attrs;
    activation_ = take_fused_activation(attrs);
    attrs.check_known({"kernel_shape", "strides", "dilations", "pads", "auto_pad", "group", "output_padding",
                       "output_shape", "method"});
    attrs_ = parse_window_attrs(attrs);
    output_padding_ = attrs.get_ints("output_padding");
    output_shape_ = attrs.get_ints("output_shape");
    group_ = attrs.get_int("group", 1);
    if (group_ <= 0) throw OpError(fmt::format("attribute 'group' must be positive, got {}", group_));
    const std::string method = attrs.get_string("method", "col2im");
    if (method == "col2im")
      method_ = DeconvMethod::kCol2im;
    else if (method == "conv")
      method_ = DeconvMethod::kConv;
    else
      throw OpError(fmt::format("attribute 'method' must be 'col2im' or 'conv', got '{}'", excerpt(method)));
  }

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    DeconvGeometry g = geometry(in);
    return {window_output_shape(in[0].shape, g.cout, g.out_h, g.out_w)};
  }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    DeconvGeometry g = geometry(in);
    Cost c = data_movement(in, out);
    c.macs = method_ == DeconvMethod::kCol2im ? g.col2im_macs() : g.conv_macs();
    c.flops = checked_add(
        {checked_mul({2, c.macs}), checked_mul({activation_.flops_per_element(), g.batch, g.cout, g.out_h, g.out_w})});
    return c;
  }

  // The method that runs, so every report row says it (ConvTranspose/col2im).
  std::string kind(const ArgInfos&) const override { return method_name(method_); }

  nlohmann::json details(const ArgInfos& in, const std::vector<Shape>&) const override {
    DeconvGeometry g = geometry(in);
    nlohmann::json d = {{"method", method_name(method_)},
                        {"macs_by_method", {{"col2im", g.col2im_macs()}, {"conv", g.conv_macs()}}},
                        {"gemm_kernel", kernels::active_gemm_kernel().name},
                        {"prepacked", in[1].constant ? "weights" : "none"}};
    if (activation_.kind != ActivationKind::kNone) d["fused_activation"] = activation_name(activation_);
    return d;
  }

  int64_t workspace_bytes(const ArgInfos& in, const std::vector<Shape>&, int threads) const override {
    DeconvGeometry g = geometry(in);
    const bool constant = in[1].constant != nullptr;
    return checked_mul({4, method_ == DeconvMethod::kCol2im ? g.col2im_workspace(constant, threads)
                                                            : g.conv_workspace(constant, threads)});
  }

  void prepare(const ArgInfos& in, const std::vector<Shape>&) override {
    geo_ = geometry(in);
    const DeconvGeometry& g = geo_;
    const float* constant = in[1].constant ? in[1].constant->data.data() : nullptr;
    if (method_ == DeconvMethod::kConv) {
      std::vector<float> flipped;
      if (constant) {
        flipped.resize(g.flipped_weights());
        flip_weights(g, constant, flipped.data());
      }
      conv_ = kernels::ConvGemm(g.conv_shape(), constant ? flipped.data() : nullptr);
    } else if (constant) {
      // One group's weights are [cin / group, rows]: the GEMM's A is their transpose.
      const int64_t cig = g.cin_per_group(), rows = g.col2im_rows();
      for (int64_t grp = 0; grp < g.group; ++grp)
        packed_.push_back(kernels::PackedMatrix::pack_a(kernels::active_gemm_kernel(), constant + grp * cig * rows, rows,
                                                        true, rows, cig));
    }
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float> workspace) const override {
    const float* bias = geo_.has_bias ? in[2].data : nullptr;
    if (method_ == DeconvMethod::kCol2im)
      run_col2im(in[0].data, in[1].data, bias, out[0].data, workspace, ctx.num_threads);
    else
      run_conv(in[0].data, in[1].data, bias, out[0].data, workspace, ctx.num_threads);
  }

 private:
  void run_col2im(const float* x, const float* weights, const float* bias, float* y, std::span<float> workspace,
                  int threads) const {
    const DeconvGeometry& g = geo_;
    const int64_t in_hw = g.h * g.w, out_hw = g.out_h * g.out_w;
    const int64_t cig = g.cin_per_group(), cog = g.cout_per_group();
    const int64_t rows = g.col2im_rows(), taps = g.kernel_size();
    float* col = workspace.data();
    const std::span<float> gemm_scratch = workspace.subspan(g.col_floats());
    // The scatter and the epilogue go over output channels, each thread its own planes.
    const int team = kernels::threads_worth_starting(g.cout * taps * in_hw, g.cout, threads);
    for (int64_t n = 0; n < g.batch; ++n) {
      float* yn = y + n * g.cout * out_hw;
      std::fill(yn, yn + g.cout * out_hw, 0.0f);
      for (int64_t grp = 0; grp < g.group; ++grp) {
        const float* xg = x + (n * g.cin + grp * cig) * in_hw;
        const kernels::GemmOperand a = packed_.empty() ? kernels::GemmOperand(weights + grp * cig * rows, rows, true)
                                                       : kernels::GemmOperand(packed_[grp]);
        kernels::gemm(rows, in_hw, cig, 1.0f, a, kernels::GemmOperand(xg, in_hw), 0.0f, col, in_hw, {}, gemm_scratch,
                      threads);
        float* yg = yn + grp * cog * out_hw;
#pragma omp parallel for num_threads(team) if (team > 1)
        for (int64_t c = 0; c < cog; ++c)
          reference::col2im(col + c * taps * in_hw, 1, g.out_h, g.out_w, g.win, g.h, g.w, yg + c * out_hw);
      }
#pragma omp parallel for num_threads(team) if (team > 1)
      for (int64_t c = 0; c < g.cout; ++c) {
        float* plane = yn + c * out_hw;
        if (bias)
          for (int64_t i = 0; i < out_hw; ++i) plane[i] += bias[c];
        activation_.apply(plane, out_hw);
      }
    }
  }

  void run_conv(const float* x, const float* weights, const float* bias, float* y, std::span<float> workspace,
                int threads) const {
    const DeconvGeometry& g = geo_;
    const reference::Conv2dShape s = g.conv_shape();
    // Runtime weights are flipped on every run: O(weights), next to the convolution's
    // O(weights * Hout * Wout).
    float* flipped = workspace.data();
    if (!conv_.prepacked()) flip_weights(g, weights, flipped);
    float* zeros = flipped + (conv_.prepacked() ? 0 : g.flipped_weights());
    const std::span<float> gemm_scratch = workspace.subspan(zeros + g.zero_inserted() - workspace.data());
    for (int64_t n = 0; n < g.batch; ++n) {
      const float* xn = x + n * g.cin * g.h * g.w;
      if (g.strided()) {
        std::fill(zeros, zeros + g.zero_inserted(), 0.0f);
        for (int64_t c = 0; c < g.cin; ++c)
          for (int64_t iy = 0; iy < g.h; ++iy)
            for (int64_t ix = 0; ix < g.w; ++ix)
              zeros[(c * s.h + iy * g.win.sh) * s.w + ix * g.win.sw] = xn[(c * g.h + iy) * g.w + ix];
        xn = zeros;
      }
      conv_.run(1, xn, flipped, bias, activation_, y + n * g.cout * g.out_h * g.out_w, gemm_scratch, threads);
    }
  }

  DeconvGeometry geometry(const ArgInfos& in) const {
    check_input_count(in, 2, 3);
    const Shape& x = in[0].shape;
    const Shape& w = in[1].shape;
    DeconvGeometry g;
    spatial_dims_2d(x, g.h, g.w);
    if (w.size() != x.size())
      throw OpError(fmt::format("weights {} must have the rank of the input {}", shape_str(w), shape_str(x)));
    g.batch = x[0];
    g.cin = x[1];
    g.group = group_;
    if (g.cin % g.group != 0)
      throw OpError(fmt::format("group {} does not divide the {} input channels", g.group, g.cin));
    if (w[0] != g.cin)
      throw OpError(fmt::format("weights {} expect {} input channels, the input has {}", shape_str(w), w[0], g.cin));
    g.cout = w[1] * g.group;
    std::vector<int64_t> kernel(w.begin() + 2, w.end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel)
      throw OpError(fmt::format("attribute 'kernel_shape' {} disagrees with weights {}", shape_str(attrs_.kernel_shape),
                                shape_str(w)));
    const TransposedWindow t =
        resolve_transposed_window(attrs_, Shape(x.begin() + 2, x.end()), kernel, output_padding_, output_shape_);
    g.win = t.win;
    g.out_h = t.out_h;
    g.out_w = t.out_w;
    g.has_bias = in.size() == 3 && in[2].present;
    if (g.has_bias && in[2].shape != Shape{g.cout})
      throw OpError(fmt::format("bias {} must have shape {}", shape_str(in[2].shape), g.cout));
    return g;
  }

  Activation activation_;  // fused by the fuse_activations pass
  WindowAttrs attrs_;
  std::vector<int64_t> output_padding_, output_shape_;
  int64_t group_ = 1;
  DeconvMethod method_ = DeconvMethod::kCol2im;
  DeconvGeometry geo_;
  std::vector<kernels::PackedMatrix> packed_;  // col2im: W^T per group, when the weights are constant
  kernels::ConvGemm conv_;                     // the conv method's convolution
};

}  // namespace

std::unique_ptr<Op> make_conv_transpose(const Node& node) {
  return std::make_unique<ConvTransposeOp>(node);
}

}  // namespace minfer
