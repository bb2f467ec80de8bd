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
// Both run on the packed SGEMM with the (constant) weights packed at bind time: col2im's
// W^T x X, and the conv method through Conv's kernel (ops/kernels/conv_gemm.h, im2col
// fused into the GEMM's packing). A fused activation runs after the bias: in the GEMM's
// epilogue for the conv method, after the scatter for col2im (only then is a sum final).
#include <fmt/format.h>

#include <algorithm>

#include "ops/kernels/conv_gemm.h"
#include "ops/kernels/gemm.h"
#include "ops/kernels/threads.h"
#include "ops/op_helpers.h"
#include "ops/reference/col2im.h"
#include "ops/reference/conv2d.h"
#include "ops/window.h"

namespace minfer {
namespace {

enum class DeconvMethod { kCol2im, kConv };

struct DeconvGeometry {
  int64_t batch = 0, cin = 0, h = 0, w = 0, cout = 0, out_h = 0, out_w = 0, group = 1;
  Window2d win;  // the scatter: input i reaches output i * stride - pad_begin + k * dilation

  int64_t cin_per_group() const { return cin / group; }
  int64_t cout_per_group() const { return cout / group; }
  int64_t kernel_size() const { return checked_mul({win.kh, win.kw}); }
  bool strided() const { return win.sh > 1 || win.sw > 1; }

  int64_t col2im_macs() const { return checked_mul({batch, kernel_size(), cin, cout_per_group(), h, w}); }
  int64_t conv_macs() const { return checked_mul({batch, kernel_size(), cin_per_group(), cout, out_h, out_w}); }

  // The conv method's convolution: over the zero-inserted input, unit stride, the
  // same dilation, and pads that make the kernel's flipped reach land where the
  // scatter would (negative pads crop).
  ConvGeometry conv_shape() const {
    ConvGeometry s;
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
  int64_t col2im_workspace(const kernels::GemmKernel& kernel, bool weights_constant, int threads) const {
    return checked_add({col_floats(), kernels::gemm_workspace_bytes(
                                          kernel, col2im_rows(), h * w, cin_per_group(), threads,
                                          weights_constant ? kernels::GemmPacked::kA : kernels::GemmPacked::kNone) /
                                          4});
  }
  int64_t flipped_weights() const { return checked_mul({cout, cin_per_group(), kernel_size()}); }
  int64_t zero_inserted() const {
    const ConvGeometry s = conv_shape();
    return strided() ? checked_mul({cin, s.h, s.w}) : 0;
  }
  int64_t conv_workspace(const kernels::GemmKernel& kernel, bool weights_constant, int threads) const {
    return checked_add({weights_constant ? 0 : flipped_weights(), zero_inserted(),
                        kernels::conv_gemm_workspace_floats(conv_shape(), kernel, weights_constant, threads)});
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

class DeconvKernel final : public Kernel {
 public:
  DeconvKernel(const DeconvGeometry& g, DeconvMethod method, bool has_bias, const Activation& act,
               const Tensor* constant_weights, Isa isa, int threads)
      : Kernel({}), g_(g), method_(method), has_bias_(has_bias), activation_(act), gemm_(&kernels::gemm_kernel(isa)) {
    const float* constant = constant_weights ? constant_weights->values<float>().data() : nullptr;
    if (method_ == DeconvMethod::kConv) {
      std::vector<float> flipped;
      if (constant) {
        flipped.resize(g.flipped_weights());
        flip_weights(g, constant, flipped.data());
      }
      conv_ = kernels::ConvGemm(g.conv_shape(), constant ? flipped.data() : nullptr, isa);
    } else if (constant) {
      // One group's weights are [cin / group, rows]: the GEMM's A is their transpose.
      const int64_t cig = g.cin_per_group(), rows = g.col2im_rows();
      for (int64_t grp = 0; grp < g.group; ++grp)
        packed_.push_back(kernels::PackedMatrix::pack_a(*gemm_, constant + grp * cig * rows, rows, true, rows, cig));
    }
    KernelFacts& f = mutable_facts();
    f.method = method_name(method_);
    f.kernel = std::string(method_name(method_)) + "_gemm";
    f.details = {{"method", method_name(method_)},
                 {"macs_by_method", {{"col2im", g.col2im_macs()}, {"conv", g.conv_macs()}}},
                 {"gemm_kernel", gemm_->name},
                 {"prepacked", constant ? "weights" : "none"}};
    if (act.kind != ActivationKind::kNone) f.details["fused_activation"] = activation_name(act);
    f.workspace_bytes =
        checked_mul({4, method_ == DeconvMethod::kCol2im ? g.col2im_workspace(*gemm_, constant != nullptr, threads)
                                                         : g.conv_workspace(*gemm_, constant != nullptr, threads)});
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           Workspace workspace) const override {
    const float* bias = has_bias_ ? in[2].f32() : nullptr;
    workspace.require(facts().workspace_bytes, "ConvTranspose");
    if (method_ == DeconvMethod::kCol2im)
      run_col2im(in[0].f32(), in[1].f32(), bias, out[0].f32(), workspace.floats(), ctx.num_threads);
    else
      run_conv(in[0].f32(), in[1].f32(), bias, out[0].f32(), workspace.floats(), ctx.num_threads);
  }

 private:
  void run_col2im(const float* x, const float* weights, const float* bias, float* y, std::span<float> workspace,
                  int threads) const {
    const DeconvGeometry& g = g_;
    const int64_t in_hw = g.h * g.w, out_hw = g.out_h * g.out_w;
    const int64_t cig = g.cin_per_group(), cog = g.cout_per_group();
    const int64_t rows = g.col2im_rows(), taps = g.kernel_size();
    float* col = workspace.data();
    const std::span<float> gemm_scratch = workspace.subspan(g.col_floats());
    // The scatter and the epilogue go over output channels, each thread its own planes.
    const int team = kernels::threads_worth_starting(g.cout * taps * in_hw, g.cout, threads, kernels::Work::kStreaming);
    for (int64_t n = 0; n < g.batch; ++n) {
      float* yn = y + n * g.cout * out_hw;
      std::fill(yn, yn + g.cout * out_hw, 0.0f);
      for (int64_t grp = 0; grp < g.group; ++grp) {
        const float* xg = x + (n * g.cin + grp * cig) * in_hw;
        const kernels::GemmOperand a = packed_.empty() ? kernels::GemmOperand(weights + grp * cig * rows, rows, true)
                                                       : kernels::GemmOperand(packed_[grp]);
        kernels::gemm(rows, in_hw, cig, 1.0f, a, kernels::GemmOperand(xg, in_hw), 0.0f, col, in_hw, {}, gemm_scratch,
                      threads, *gemm_);
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
    const DeconvGeometry& g = g_;
    const ConvGeometry s = g.conv_shape();
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

  const DeconvGeometry g_;
  const DeconvMethod method_;
  const bool has_bias_;
  const Activation activation_;
  const kernels::GemmKernel* gemm_;
  std::vector<kernels::PackedMatrix> packed_;  // col2im: W^T per group, when the weights are constant
  kernels::ConvGemm conv_;                     // the conv method's convolution
};

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

  OpTraits traits() const override {
    OpTraits t;
    t.fuses_activation = true;
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const DeconvGeometry g = geometry(in);
    return {{DType::kFloat32, window_output_shape(in[0].shape(), g.cout, g.out_h, g.out_w)}};
  }

  OpCost cost(const OpSignature& sig) const override {
    const DeconvGeometry g = geometry(sig.inputs);
    const CostExpr taps = CostExpr::of("K_h", g.win.kh) * CostExpr::of("K_w", g.win.kw);
    const CostExpr macs = method_ == DeconvMethod::kCol2im
                              ? CostExpr::of("N", g.batch) * taps * CostExpr::of("C_in", g.cin) *
                                    CostExpr::of("C_out/group", g.cout_per_group()) * CostExpr::of("H_in", g.h) *
                                    CostExpr::of("W_in", g.w)
                              : CostExpr::of("N", g.batch) * taps * CostExpr::of("C_in/group", g.cin_per_group()) *
                                    CostExpr::of("C_out", g.cout) * CostExpr::of("H_out", g.out_h) *
                                    CostExpr::of("W_out", g.out_w);
    return op_cost(*this, sig, macs,
                   product_flops(macs, activation_, checked_mul({g.batch, g.cout, g.out_h, g.out_w})));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    const bool has_bias = sig.inputs.size() == 3 && sig.inputs[2].present;
    return std::make_unique<DeconvKernel>(geometry(sig.inputs), method_, has_bias, activation_, sig.inputs[1].constant,
                                          ctx.isa, ctx.num_threads);
  }

  // Weights [C_in, C_out/group, kh, kw]: output channel (ic / (C_in/group)) * C_out/group + j.
  AffineFold fold_channel_affine(const OpSignature& sig, const ChannelAffine& a) const override {
    const Shape& ws = sig.inputs[1].shape();
    const int64_t inner = num_elements(ws) / (ws[0] * ws[1]), cig = ws[0] / group_;
    return fold_affine_into_weights(
        sig, activation_.kind != ActivationKind::kNone, ws[1] * group_, a,
        [&](int64_t i) { return (i / (ws[1] * inner) / cig) * ws[1] + (i / inner) % ws[1]; },
        [](const Tensor& bias, int64_t c) { return double(bias.values<float>()[c]); });
  }

 private:
  DeconvGeometry geometry(std::span<const OpInput> in) const {
    check_input_count(in, 2, 3);
    require_float(in);
    const Shape& x = in[0].shape();
    const Shape& w = in[1].shape();
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
    g.cout = checked_mul({w[1], g.group});
    std::vector<int64_t> kernel(w.begin() + 2, w.end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel)
      throw OpError(fmt::format("attribute 'kernel_shape' {} disagrees with weights {}", shape_str(attrs_.kernel_shape),
                                shape_str(w)));
    const TransposedWindow t =
        resolve_transposed_window(attrs_, Shape(x.begin() + 2, x.end()), kernel, output_padding_, output_shape_);
    g.win = t.win;
    g.out_h = t.out_h;
    g.out_w = t.out_w;
    if (in.size() == 3 && in[2].present && in[2].shape() != Shape{g.cout})
      throw OpError(fmt::format("bias {} must have shape {}", shape_str(in[2].shape()), g.cout));
    return g;
  }

  Activation activation_;  // fused by the fuse_activations pass
  WindowAttrs attrs_;
  std::vector<int64_t> output_padding_, output_shape_;
  int64_t group_ = 1;
  DeconvMethod method_ = DeconvMethod::kCol2im;
};

}  // namespace

std::unique_ptr<Op> make_conv_transpose(const Node& node) {
  return std::make_unique<ConvTransposeOp>(node);
}

}  // namespace minfer
