// Conv, with the kernel chosen once when it binds: a direct depthwise kernel when group
// equals the input channels (the SIMD one for the windows it covers, see
// ops/kernels/depthwise_conv.h, its channels-in-lanes form also with NCHWc tensors in a
// region of the blocked layout; else the scalar one: any channel multiplier), a direct
// SIMD convolution when there are few input channels (ops/kernels/direct_conv.h: the
// RGB first layer), a direct convolution in the blocked NCHWc layout for the other
// windows larger than 1x1 with constant weights, where the target has one and the groups
// are whole blocks (ops/kernels/blocked_conv.h; chosen where it measured faster, see
// use_blocked and docs/performance.md; its 3x3 stride-1 layers by Winograd F(2x2, 3x3)
// where that measured faster, "blocked_winograd"), a direct pointwise kernel for unpadded 1x1
// convolutions with one group and constant weights where it measured faster
// (ops/kernels/pointwise_conv.h), a direct GEMM over the (subsampled when strided) input
// for the other unpadded 1x1 convolutions, and im2col + GEMM otherwise, both on the
// packed SGEMM with the weights packed at bind time and im2col fused into the GEMM's B
// packing (ops/kernels/conv_gemm.h).
// A fused activation (the fuse_activations pass) runs in every kernel's epilogue; a fused
// residual (fuse_residual_add) is summed before it; a fused per-channel input scale
// (fuse_channel_scale) is folded into a per-image copy of the direct pointwise kernel's
// weights, applied as the pointwise GEMM packs its input, else on a copy of the input.
#include <fmt/format.h>

#include "ops/blocked_layout.h"
#include "ops/kernels/blocked_conv.h"
#include "ops/kernels/conv_gemm.h"
#include "ops/kernels/depthwise_conv.h"
#include "ops/kernels/direct_conv.h"
#include "ops/kernels/pointwise_conv.h"
#include "ops/kernels/threads.h"
#include "ops/kernels/workspace.h"
#include "ops/op_helpers.h"
#include "ops/reference/depthwise_conv.h"
#include "ops/window.h"

namespace minfer {
namespace {

enum class ConvMethod { kIm2col, kPointwise, kPointwiseDirect, kDepthwise, kDepthwiseSimd, kDirectSimd, kBlocked };

// The blocked kernel's algorithm for the attribute "algorithm".
kernels::BlockedAlgorithm blocked_algorithm(const ConvGeometry& g, Isa isa, const std::string& algorithm) {
  if (algorithm == "direct" || !kernels::winograd_applies(g, isa)) return kernels::BlockedAlgorithm::kDirect;
  return algorithm == "winograd" ? kernels::BlockedAlgorithm::kWinograd : kernels::default_blocked_algorithm(g, isa);
}

const char* method_name(ConvMethod k) {
  switch (k) {
    case ConvMethod::kDepthwise: return "depthwise_direct";
    case ConvMethod::kDepthwiseSimd: return "depthwise_simd";
    case ConvMethod::kDirectSimd: return "direct_simd";
    case ConvMethod::kBlocked: return "blocked_direct";
    case ConvMethod::kPointwise: return "pointwise_gemm";
    case ConvMethod::kPointwiseDirect: return "pointwise_direct";
    case ConvMethod::kIm2col: return "im2col_gemm";
  }
  return "";
}

std::string conv_class(const ConvGeometry& g) {
  if (g.group > 1 && g.group == g.cin) return "depthwise";
  if (g.group > 1) return "grouped";
  if (g.win.kh == 1 && g.win.kw == 1) return "pointwise";
  return "regular";
}

// Grouped layers whose groups are narrower than the blocked kernel's lanes (RegNetY's 8
// channels a group, ResNeXt's 4 to 32) run it on merged groups: r = lanes / channels per
// group neighbouring groups as one whose weights are zero between them, r times the
// multiply-adds at the blocked kernel's rate instead of one small im2col GEMM per group
// (RegNetY-400MF's grouped layers took 1.5-2.5x ORT's time that way). Up to 4 merged.
constexpr int64_t kMaxMergedGroups = 4;

ConvGeometry merged_groups(const ConvGeometry& g, Isa isa) {
  const kernels::BlockedConvKernel* k = kernels::blocked_conv_kernel(isa);
  if (!k || g.group <= 1) return g;
  const int64_t per_group = g.cin_per_group(), out_per_group = g.cout_per_group();
  if ((per_group % k->lanes == 0 && out_per_group % k->lanes == 0) || k->lanes % per_group != 0) return g;
  const int64_t r = k->lanes / per_group;
  if (r > kMaxMergedGroups || g.group % r != 0 || (r * out_per_group) % k->lanes != 0) return g;
  ConvGeometry m = g;
  m.group = g.group / r;
  return m;
}

// g's weights [cout, cin / group, kh, kw] as those of m, its merged groups': each output
// channel's taps at its own group's place among the merged group's inputs, zero elsewhere.
std::vector<float> merged_group_weights(const ConvGeometry& g, const ConvGeometry& m, const float* w) {
  const int64_t taps = g.win.kh * g.win.kw, per_group = g.cin_per_group(), merged = m.cin_per_group();
  const int64_t r = g.group / m.group, out_per_group = g.cout_per_group();
  std::vector<float> out(static_cast<size_t>(checked_mul({g.cout, merged, taps})), 0.0f);
  for (int64_t o = 0; o < g.cout; ++o) {
    const int64_t slot = o / out_per_group % r;
    std::copy(w + o * per_group * taps, w + (o + 1) * per_group * taps,
              out.begin() + (o * merged + slot * per_group) * taps);
  }
  return out;
}

// Where the blocked direct convolution replaces im2col + GEMM (measured with
// bench/conv_bench.cc, docs/performance.md): windows larger than 1x1 (on 1x1 layers the
// GEMM was 1.5-3x faster) with weights known at bind time (they are packed then), on
// targets with a blocked kernel and groups of whole blocks (merged_groups). Strided
// layers too, on AVX2 since its tiles kept their sums in registers: ResNet's 3x3 stride-2
// layers 0.68-0.88x the GEMM's time in the models (7x7 outputs 0.97-1.07x), Inception-v3's
// 0.56-0.83x, the models 0.93-0.98x (engine_bench, Zen 5 on its AVX2 path).
bool use_blocked(const ConvGeometry& g, const Tensor* constant_weights, Isa isa) {
  return constant_weights && g.win.kh * g.win.kw > 1 && kernels::blocked_conv_applies(merged_groups(g, isa), isa);
}

// Where the layer runs at least as fast in NCHWc in and out as in NCHW
// (bench/conv_bench.cc, the _nchwc cases; docs/performance.md): the layers use_blocked
// gives the blocked kernel, which then skips its reorders, and 1x1 layers with many input
// channels or, on AVX-512, a stride (on AVX2 strided ones took 1.6x), whose output
// channels are whole blocks (else it cannot write NCHWc, and reading it summed zero
// lanes: MobileNetV2's 144 -> 24 layer at 56x56 took 1.42x the direct pointwise kernel's
// time in-model). Many is 128 on AVX2 (0.86-1.05x the NCHW kernels' time, in the models
// 0.95-1.0x; with 64, ResNet-50 took 1.016x and MobileNetV3 1.012x) and 64 on AVX-512:
// the inverted residuals' 80 -> 480 and 96 -> 576 expansions at 14x14 between NCHWc
// depthwise layers took 0.89-0.91x their NCHW time, MobileNetV2, EfficientNet-B0 and
// RegNetX 0.96-0.98x (one thread and two, Zen 5); at 16 MobileNetV2's 32 -> 192 layers
// at 28x28 took 1.08x.
bool prefers_blocked(const ConvGeometry& g, const Tensor* constant_weights, Isa isa) {
  const bool pointwise = g.win.kh * g.win.kw == 1, strided = g.win.sh > 1 || g.win.sw > 1;
  const kernels::BlockedConvKernel* k = kernels::blocked_conv_kernel(isa);
  const int64_t many_inputs = isa == Isa::kAvx512 ? 64 : 128;
  const bool wide_or_strided = strided ? isa == Isa::kAvx512 : g.cin_per_group() >= many_inputs;
  return use_blocked(g, constant_weights, isa) || (k && constant_weights && pointwise && wide_or_strided &&
                                                   g.cout % k->lanes == 0 && kernels::blocked_conv_applies(g, isa));
}

class ConvKernel final : public Kernel {
 public:
  // model_g: the node's convolution; with constant weights and one group it runs cropped
  // to the taps that read the input (crop_to_input), g_, on a copy of their weights.
  ConvKernel(const ConvGeometry& model_g, bool has_bias, bool has_residual, bool has_scale, const Activation& act,
             const Tensor* constant_weights, Isa isa, int threads, kernels::BlockedLayouts layouts,
             const std::string& algorithm, bool split_output_channels)
      : Kernel({}),
        crop_(constant_weights && model_g.group == 1 ? crop_to_input(model_g) : std::nullopt),
        g_(crop_ ? with_window(model_g, crop_->win) : model_g),
        cropped_weights_(crop_ ? cropped_weights(model_g, *crop_, constant_weights->values<float>().data())
                               : std::vector<float>{}),
        has_bias_(has_bias),
        has_residual_(has_residual),
        has_scale_(has_scale),
        activation_(act),
        layouts_(layouts) {
    const ConvGeometry& g = g_;
    const float* constant_values = !constant_weights ? nullptr
                                   : crop_           ? cropped_weights_.data()
                                                     : constant_weights->values<float>().data();
    const bool blocked_tensors = layouts.any();
    depthwise_ = g.group > 1 && g.group == g.cin ? kernels::find_depthwise_kernel(g, isa, layouts) : nullptr;
    direct_ = kernels::find_direct_conv_kernel(g, isa);
    if (blocked_tensors && depthwise_) {  // the channels-in-lanes depthwise kernel reads and writes NCHWc too
      method_ = ConvMethod::kDepthwiseSimd;
    } else if (blocked_tensors) {  // else only the blocked kernel does
      if (!constant_weights || !kernels::blocked_conv_applies(merged_groups(g, isa), isa, layouts))
        throw UnsupportedError("this convolution has no NCHWc kernel on this target");
      method_ = ConvMethod::kBlocked;
    } else if (g.group > 1 && g.group == g.cin)
      method_ = depthwise_ ? ConvMethod::kDepthwiseSimd : ConvMethod::kDepthwise;
    else if (direct_)
      method_ = ConvMethod::kDirectSimd;
    else if (use_blocked(g, constant_weights, isa))
      method_ = ConvMethod::kBlocked;
    else if (pointwise_ = constant_weights ? kernels::find_pointwise_kernel(g, isa) : nullptr; pointwise_)
      method_ = ConvMethod::kPointwiseDirect;
    else
      method_ =
          kernels::is_pointwise(g) || kernels::is_strided_pointwise(g) ? ConvMethod::kPointwise : ConvMethod::kIm2col;

    KernelFacts& f = mutable_facts();
    f.op_class = conv_class(model_g);
    f.kernel = method_name(method_);
    f.details = {{"kernel", f.kernel}};
    if (crop_) {
      // The MACs stay the convolution's (the cost convention); these are those it runs.
      f.details["cropped_window"] = fmt::format("{}x{} -> {}x{}: the other taps read only padding", model_g.win.kh,
                                                model_g.win.kw, g.win.kh, g.win.kw);
      f.details["macs_run"] = checked_mul({g.batch, g.cout, g.out_h, g.out_w, g.cin_per_group(), g.win.kh, g.win.kw});
    }
    switch (method_) {
      case ConvMethod::kDepthwise: f.details["multiplier"] = g.cout / g.cin; break;
      case ConvMethod::kDepthwiseSimd:
        f.details["variant"] = depthwise_->name;
        if (blocked_tensors)
          f.details["tensor_layouts"] =
              fmt::format("{} -> {}", layout_name(layouts.input_blocked ? depthwise_->lanes : 0),
                          layout_name(layouts.output_blocked ? depthwise_->lanes : 0));
        f.thread_scratch_bytes = checked_mul({4, kernels::depthwise_thread_floats(*depthwise_, g)});
        break;
      case ConvMethod::kDirectSimd:
        f.details["variant"] = direct_->name;
        f.thread_scratch_bytes = checked_mul({4, kernels::direct_conv_thread_floats(*direct_, g)});
        break;
      case ConvMethod::kBlocked: {
        const ConvGeometry m = merged_groups(g, isa);
        const float* w = constant_values;
        if (m.group != g.group) {
          merged_weights_ = merged_group_weights(g, m, w);
          w = merged_weights_.data();
          f.details["merged_groups"] = fmt::format("{} groups of {} input channels as {} of {}", g.group,
                                                   g.cin_per_group(), m.group, m.cin_per_group());
        }
        blocked_ = kernels::BlockedConv(m, w, isa, layouts, blocked_algorithm(m, isa, algorithm));
        // Only Winograd reads the unpacked weights as it runs.
        if (blocked_.algorithm() != kernels::BlockedAlgorithm::kWinograd) merged_weights_ = {};
        const kernels::BlockedConvKernel& k = blocked_.kernel();
        if (blocked_.algorithm() == kernels::BlockedAlgorithm::kWinograd) {
          // The MACs stay the convolution's (the cost convention); these are the
          // multiplies it runs instead, in 16 products per 2x2 tile and channel pair.
          f.kernel = "blocked_winograd";
          f.details["kernel"] = f.kernel;
          f.details["algorithm"] = "Winograd F(2x2, 3x3)";
          f.details["multiplies_run"] = checked_mul({g.batch, (g.out_h + 1) / 2, (g.out_w + 1) / 2, 16, g.cin, g.cout});
          f.details["transformed_weight_bytes"] = checked_mul({4, blocked_.packed_weight_floats()});
        }
        f.details["variant"] = k.name;
        f.details["layout"] = fmt::format("NCHW{}c", k.lanes);
        // The tensors' own layouts: NCHWc ones need no reorder here (the blocked_layout pass).
        f.details["tensor_layouts"] = fmt::format("{} -> {}", layout_name(layouts.input_blocked ? k.lanes : 0),
                                                  layout_name(layouts.output_blocked ? k.lanes : 0));
        // The input copy's block: fewer lanes where the input has fewer channels.
        f.details["input_layout"] = fmt::format("NCHW{}c", blocked_.input_lanes());
        f.details["prepacked"] = "weights";
        // What the layout costs: the NCHWc copy of the input (with its zero border)
        // written per image by the team that runs (threads that split rows each copy the
        // rows their windows read), none for an NCHWc input without padding; an NCHW
        // output goes back from each thread's scratch.
        f.details["input_reorder_bytes"] = checked_mul({4, g.batch, blocked_.input_copy_floats(g.batch, threads)});
        f.details["input_channel_chunk"] = blocked_.chunk_blocks() * k.lanes;
        f.details["output_band_rows"] = blocked_.band_rows();
        // A fused scale runs the images one at a time (blocked_scale): scratch for either.
        const int64_t images = has_scale && layouts.any() ? 1 : g.batch;
        f.workspace_bytes = checked_mul(
            {4, std::max(blocked_.workspace_floats(g.batch, threads), blocked_.workspace_floats(images, threads))});
        f.thread_scratch_bytes = checked_mul(
            {4, std::max(blocked_.thread_floats(g.batch, threads), blocked_.thread_floats(images, threads))});
        // It sums the residual as it moves each output element to NCHW, reading the
        // residual element first: the output may take the residual's buffer.
        if (has_residual) f.inplace_input = 3;
        break;
      }
      case ConvMethod::kPointwiseDirect:
        pointwise_conv_ = kernels::PointwiseConv(*pointwise_, g, constant_values, split_output_channels);
        f.details["variant"] = pointwise_->name;
        if (pointwise_conv_.splits_output_channels()) f.details["thread_split"] = "output channels";
        f.details["prepacked"] = "weights";
        f.details["weight_chunk_channels"] = pointwise_conv_.chunk();
        if (pointwise_conv_.workspace_floats() > 0)
          f.details["input_subsample_bytes"] = 4 * pointwise_conv_.workspace_floats();
        f.workspace_bytes = checked_mul({4, pointwise_conv_.workspace_floats(has_scale)});
        // Its tiles read each residual element, then store the output element over it: the
        // output may take the residual's buffer (the planner decides).
        if (has_residual) f.inplace_input = 3;
        break;
      case ConvMethod::kIm2col:
      case ConvMethod::kPointwise:
        gemm_ = kernels::ConvGemm(g, constant_values, isa);
        f.details["gemm_kernel"] = gemm_.kernel().name;
        f.details["prepacked"] = constant_weights ? "weights" : "none";
        if (method_ == ConvMethod::kIm2col) f.details["im2col"] = "into the GEMM's B panels";
        if (gemm_.subsampled_floats() > 0) f.details["input_subsample_bytes"] = 4 * gemm_.subsampled_floats();
        // Which side of the product is broadcast: pixels on few-pixel planes (see ConvGemm).
        f.details["gemm_rows"] = gemm_.pixels_as_rows() ? "pixels" : "output channels";
        f.workspace_bytes =
            checked_mul({4, kernels::conv_gemm_workspace_floats(g, gemm_.kernel(), constant_weights, threads)});
        break;
    }
    if (act.kind != ActivationKind::kNone) f.details["fused_activation"] = activation_name(act);
    if (has_residual) f.details["fused_residual"] = residual_summed_by_kernel() ? "in the epilogue" : "a second pass";
    if (has_scale) {
      const bool folded = method_ == ConvMethod::kPointwiseDirect || blocked_scale();
      f.details["fused_input_scale"] = folded              ? "folded into the weights per image"
                                       : scale_in_kernel() ? "in the GEMM's B packing"
                                                           : "on a copy of the input";
      if (blocked_scale())  // the image's scaled copy of the packed weights
        f.workspace_bytes = checked_add({f.workspace_bytes, checked_mul({4, blocked_.packed_weight_floats()})});
      else if (!scale_in_kernel())
        f.workspace_bytes = checked_add({f.workspace_bytes, checked_mul({4, scaled_floats()})});
    }
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           Workspace workspace) const override {
    const float* x = in[0].f32();
    const float* weights = crop_ ? cropped_weights_.data() : in[1].f32();
    const float* bias = has_bias_ ? in[2].f32() : nullptr;
    const float* residual = has_residual_ ? in[3].f32() : nullptr;
    const float* scale = has_scale_ ? in[4].f32() : nullptr;
    float* y = out[0].f32();
    std::span<float> scratch = workspace.floats();
    if (scale && !scale_in_kernel()) {  // x * scale into the workspace's start, then the kernel on it
      float* scaled = scratch.data();
      scale_channels(x, scale, scaled, ctx.num_threads);
      x = scaled;
      scratch = scratch.subspan(static_cast<size_t>(scaled_floats()));
      scale = nullptr;
    }
    // Kernels without a residual in their epilogue run without the activation, then the
    // sum and the activation are one more pass over the output.
    const bool second_pass = residual && !residual_summed_by_kernel();
    const Activation act = second_pass ? Activation{} : activation_;
    const int64_t in_image = g_.cin * g_.h * g_.w, out_image = g_.cout * g_.out_h * g_.out_w;
    switch (method_) {
      case ConvMethod::kDepthwiseSimd:
        kernels::depthwise_conv2d(*depthwise_, g_, g_.batch, x, weights, bias, y, workspace.threads(), ctx.num_threads,
                                  act, layouts_);
        break;
      case ConvMethod::kDirectSimd:
        kernels::direct_conv2d(*direct_, g_, g_.batch, x, weights, bias, y, workspace.threads(), ctx.num_threads, act);
        break;
      case ConvMethod::kBlocked:
        if (scale) {  // each image with its own scaled copy of the packed weights
          float* packed = scratch.data();
          const std::span<float> rest = scratch.subspan(static_cast<size_t>(blocked_.packed_weight_floats()));
          for (int64_t n = 0; n < g_.batch; ++n) {
            blocked_.scale_packed_weights(scale + n * g_.cin, packed);
            blocked_.run(1, x + n * in_image, bias, act, y + n * out_image, rest, workspace.threads(), ctx.num_threads,
                         residual ? residual + n * out_image : nullptr, nullptr, packed);
          }
          break;
        }
        blocked_.run(g_.batch, x, bias, act, y, scratch, workspace.threads(), ctx.num_threads, residual,
                     merged_weights_.empty() ? weights : merged_weights_.data());
        break;
      case ConvMethod::kPointwiseDirect:
        pointwise_conv_.run(g_.batch, x, bias, act, y, scratch, ctx.num_threads, residual, scale);
        break;
      case ConvMethod::kIm2col:
      case ConvMethod::kPointwise:
        gemm_.run(g_.batch, x, weights, bias, act, y, scratch, ctx.num_threads, residual, scale);
        break;
      case ConvMethod::kDepthwise:
        // The scalar kernel has no epilogue: the activation is a second pass over each
        // image's output while it is still in cache.
        for (int64_t n = 0; n < g_.batch; ++n) {
          reference::depthwise_conv2d(g_, x + n * in_image, weights, bias, y + n * out_image);
          if (!second_pass) activation_.apply(y + n * out_image, out_image);
        }
        break;
    }
    if (second_pass)
      for (int64_t n = 0; n < g_.batch; ++n)
        add_residual(residual + n * out_image, out_image, activation_, y + n * out_image);
  }

 private:
  // The direct pointwise kernel folds the scale into its weights, the pointwise GEMM
  // applies it as it packs its input (not when the pixels are the product's rows: the
  // input is then its A, packed without a hook).
  bool scale_in_kernel() const {
    return method_ == ConvMethod::kPointwiseDirect || blocked_scale() ||
           (method_ == ConvMethod::kPointwise && gemm_.pointwise() && !gemm_.pixels_as_rows());
  }
  // Whole lines, so that the kernel's workspace after the scaled copy stays line-aligned.
  int64_t scaled_floats() const { return whole_lines(checked_mul({g_.batch, g_.cin, g_.h, g_.w})); }
  // In NCHWc the blocked kernel (the 1x1 layers fuse_channel_scale gives it sum
  // directly) folds a fused scale into a copy of its packed weights per image where they
  // are fewer floats than an image's input (RegNetY's 784 -> 784 layer at 7x7 took 1.24x
  // the time of its unscaled twin that way), else it runs on a scaled copy of the input.
  bool blocked_scale() const {
    return has_scale_ && method_ == ConvMethod::kBlocked && layouts_.any() &&
           blocked_.packed_weight_floats() < checked_mul({g_.cin, g_.h, g_.w});
  }

  // x[n, c] * scale[n, c] for every image n and channel c, into dst: planes of one
  // channel in NCHW, of a block of `lanes` channels (each pixel a run of them) in NCHWc.
  void scale_channels(const float* x, const float* scale, float* dst, int threads) const {
    const int64_t lanes = layouts_.input_blocked ? blocked_.kernel().lanes : 1;
    const int64_t planes = g_.batch * g_.cin / lanes, plane = g_.h * g_.w;
    const int team =
        kernels::threads_worth_starting(planes * plane * lanes, planes, threads, kernels::Work::kStreaming);
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t i = 0; i < plane; ++i)
        for (int64_t l = 0; l < lanes; ++l)
          dst[(p * plane + i) * lanes + l] = x[(p * plane + i) * lanes + l] * scale[p * lanes + l];
  }

  // The GEMM, the direct pointwise and the blocked kernel add a residual where they store
  // their output.
  bool residual_summed_by_kernel() const {
    return method_ == ConvMethod::kIm2col || method_ == ConvMethod::kPointwise ||
           method_ == ConvMethod::kPointwiseDirect || method_ == ConvMethod::kBlocked;
  }

  // g with `win` as its window.
  static ConvGeometry with_window(const ConvGeometry& g, const Window2d& win) {
    ConvGeometry c = g;
    c.win = win;
    return c;
  }
  // The weights [cout, cin, kh, kw] of g's taps that crop keeps.
  static std::vector<float> cropped_weights(const ConvGeometry& g, const WindowCrop& crop, const float* w) {
    const int64_t kh = crop.win.kh, kw = crop.win.kw, filters = g.cout * g.cin_per_group();
    std::vector<float> out(static_cast<size_t>(checked_mul({filters, kh, kw})));
    for (int64_t f = 0; f < filters; ++f)
      for (int64_t ky = 0; ky < kh; ++ky)
        std::copy_n(w + (f * g.win.kh + crop.ky0 + ky) * g.win.kw + crop.kx0, kw, out.begin() + (f * kh + ky) * kw);
    return out;
  }

  const std::optional<WindowCrop> crop_;
  const ConvGeometry g_;                      // the convolution run: the node's, or cropped
  const std::vector<float> cropped_weights_;  // with crop_: the taps kept, [cout, cin, kh, kw]
  const bool has_bias_, has_residual_, has_scale_;
  const Activation activation_;
  const kernels::BlockedLayouts layouts_;  // NCHWc tensors (the blocked and depthwise kernels)
  ConvMethod method_ = ConvMethod::kIm2col;
  const kernels::DepthwiseKernel* depthwise_ = nullptr;
  const kernels::DirectConvKernel* direct_ = nullptr;
  const kernels::PointwiseKernel* pointwise_ = nullptr;
  kernels::PointwiseConv pointwise_conv_;  // pointwise_direct: the weights packed in blocks
  kernels::ConvGemm gemm_;                 // im2col and pointwise: the weights packed per group
  kernels::BlockedConv blocked_;           // blocked: the weights packed in blocks
  std::vector<float> merged_weights_;      // blocked Winograd on merged groups: their unpacked weights
};

class ConvOp final : public Op {
 public:
  explicit ConvOp(const Node& node) {
    Attributes attrs = node.attrs;
    activation_ = take_fused_activation(attrs);
    // Set by fuse_residual_add: a fourth input is summed into the output before the activation.
    residual_ = attrs.get_int("fused_residual", 0) != 0;
    // Set by fuse_channel_scale: the input's channels are scaled by a fifth input [N, C, 1, 1].
    scale_ = attrs.get_int("fused_input_scale", 0) != 0;
    // Set by blocked_layout: the input, the output (and the residual) are NCHWc.
    blocked_input_ = attrs.get_int(kBlockedInputAttr, 0);
    blocked_output_ = attrs.get_int(kBlockedOutputAttr, 0);
    // Set by thread_splits: the output's only reader, a depthwise convolution, splits channels.
    split_output_channels_ = attrs.get_int("split_output_channels", 0) != 0;
    // The engine attribute "algorithm" (engine_bench --conv_algorithm): "auto", where the
    // kernel binding measured faster; "direct", never Winograd; "winograd", wherever it
    // applies (docs/model-format.md).
    const std::string algorithm = attrs.get_string("algorithm", "auto");
    if (algorithm != "auto" && algorithm != "direct" && algorithm != "winograd")
      throw OpError(fmt::format("attribute 'algorithm' must be auto, direct or winograd, got '{}'", algorithm));
    algorithm_ = algorithm;
    attrs.check_known({"kernel_shape", "strides", "dilations", "pads", "auto_pad", "group", "fused_residual",
                       "fused_input_scale", "algorithm", "split_output_channels", kBlockedInputAttr,
                       kBlockedOutputAttr});
    if (blocked_input_ < 0 || blocked_output_ < 0 ||
        (blocked_input_ && blocked_output_ && blocked_input_ != blocked_output_))
      throw OpError("attributes 'blocked_input' and 'blocked_output' must be one lane count");
    attrs_ = parse_window_attrs(attrs);
    group_ = attrs.get_int("group", 1);
    if (group_ <= 0) throw OpError(fmt::format("attribute 'group' must be positive, got {}", group_));
  }

  OpTraits traits() const override {
    OpTraits t;
    t.fuses_activation = true;
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const ConvGeometry g = geometry(in);
    return {{DType::kFloat32, output_shape(logical_input(in), g)}};
  }

  OpCost cost(const OpSignature& sig) const override {
    const ConvGeometry g = geometry(sig.inputs);
    const CostExpr macs = CostExpr::of("N", g.batch) * CostExpr::of("K_h", g.win.kh) * CostExpr::of("K_w", g.win.kw) *
                          CostExpr::of("C_in/group", g.cin_per_group()) * CostExpr::of("H_out", g.out_h) *
                          CostExpr::of("W_out", g.out_w) * CostExpr::of("C_out", g.cout);
    const int64_t outputs = checked_mul({g.batch, g.cout, g.out_h, g.out_w});
    CostExpr flops = product_flops(macs, activation_, outputs);
    if (residual_)  // the fused Add's FLOPs (docs/cost-model.md)
      flops = flops + CostExpr::of("residual add FLOPs/element", 1) * CostExpr::of("output elements", outputs);
    if (scale_)  // the fused Mul's
      flops = flops + CostExpr::of("input scale FLOPs/element", 1) *
                          CostExpr::of("input elements", checked_mul({g.batch, g.cin, g.h, g.w}));
    return op_cost(*this, sig, macs, flops);
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    const ConvGeometry g = geometry(sig.inputs);
    const bool has_bias = sig.inputs.size() >= 3 && sig.inputs[2].present;
    const kernels::BlockedLayouts layouts{blocked_input_ > 0, blocked_output_ > 0};
    if (scale_ && layouts.any() && g.win.kh * g.win.kw != 1)
      throw UnsupportedError("a fused input scale in the NCHWc layout needs a 1x1 window");
    if (layouts.any()) {
      const int64_t lanes = blocked_lanes(ctx.isa);
      if (!lanes || lanes != std::max(blocked_input_, blocked_output_))
        throw UnsupportedError(fmt::format("the {} layout has no kernel on {}",
                                           layout_name(std::max(blocked_input_, blocked_output_)), isa_name(ctx.isa)));
    }
    return std::make_unique<ConvKernel>(g, has_bias, residual_, scale_, activation_, sig.inputs[1].constant, ctx.isa,
                                        ctx.num_threads, layouts, algorithm_, split_output_channels_);
  }

  BlockedLayoutSupport blocked_layout(const OpSignature& sig, Isa isa) const override {
    const kernels::BlockedConvKernel* k = kernels::blocked_conv_kernel(isa);
    const Tensor* weights = sig.inputs[1].constant;
    // A 1-D convolution's [N, C, L] has no NCHWc form in the graph (ops/blocked_layout.h).
    if (!k || !weights || logical_input(sig.inputs).size() != 4) return {};
    const ConvGeometry g = geometry(sig.inputs);
    // A fused input scale folds into the blocked kernel's weights only where it sums
    // directly: the 1x1 layers fuse_channel_scale gives it.
    if (scale_ && g.win.kh * g.win.kw != 1) return {};
    if (g.group > 1 && g.group == g.cin) return depthwise_blocked_layout(g, isa);
    if (kernels::find_direct_conv_kernel(g, isa)) return {};  // the small-channel kernel is faster
    BlockedLayoutSupport s;
    s.lanes = k->lanes;
    const ConvGeometry m = merged_groups(g, isa);
    s.input = kernels::blocked_conv_applies(m, isa, {true, false});
    s.output = kernels::blocked_conv_applies(m, isa, {false, true});
    // A layer the blocked kernel takes in NCHW reorders its input anyway, and a 1x1
    // stride-1 one reads an NCHW input of whole blocks in place: one that widens its input
    // starts a region where it is preferred, or where it expands it (twice or more) on a
    // plane of 28x28 or more, however few its inputs. ResNet-50's first shortcut (64 ->
    // 256 at 56x56, summing the region's 64 -> 256 layer) wrote NCHW, the layer beside it
    // too, and a Reorder of the sum (0.28 ms) led into the next block; starting the region
    // there, layer1's 64 -> 256 and 256 -> 64 layers took 0.79x and 0.86x their time, the
    // shortcut 1.10x (one thread, Zen 5). The expansions of MobileNets and EfficientNet
    // (16 -> 64 or 96 at 112x112, say) write NCHWc for the depthwise layer after them,
    // which then reads it without a transpose: MobileNetV1's 64-channel stride-2 one at
    // 56x56 took 0.55-0.70x its time; MobileNetV1 and V2 0.97-0.99x, SqueezeNet (its fire
    // expansions at 55x55) 0.94-0.96x, V3-Large and EfficientNet-B0 0.97-1.01x (one
    // thread, Zen 4, both targets). At 28x28 neither faster nor slower than without. A
    // layer that only widens feeds a convolution that gains less: RegNetY-400MF's 32 -> 48
    // at 112x112, into a padded grouped 3x3 layer (which copies its input either way),
    // took 1.12x its time (AVX2). docs/performance.md.
    const bool widens = kernels::is_pointwise(g) && g.cout > g.cin;
    const bool expands_large_plane =
        kernels::is_pointwise(g) && g.cout >= 2 * g.cin && g.cout % k->lanes == 0 && g.out_h * g.out_w >= 28 * 28;
    s.preferred = (s.input || s.output) && (prefers_blocked(g, weights, isa) || (s.output && expands_large_plane));
    s.starts_region = use_blocked(g, weights, isa) || (s.preferred && widens);
    // A 1x1 layer of 32 to 63 input channels on AVX-512 is no faster in NCHWc than the
    // direct pointwise kernel on NCHW, so it starts no region (unless it expands a large
    // plane); but where a region's NCHWc tensor is all it reads (weak_input), joining it
    // spares the Reorders at the region's edge and keeps its readers in the region:
    // RegNetX-400MF's first stage (32 channels, its grouped 3x3 layers 0.90x the time) and
    // MobileNetV2's 32-channel projections and expansions (0.93x; 0.82x on two threads)
    // then stay in NCHWc: MobileNetV2 0.98-0.99x the time on one thread, RegNetX 0.98x on
    // two (0.99-1.01x on one), in medians of interleaved runs (Zen 5; docs/performance.md).
    if (!s.preferred && (s.input || s.output) && isa == Isa::kAvx512 && kernels::is_pointwise(g) &&
        g.cin_per_group() >= 32 && g.cout % k->lanes == 0)
      s.preferred = s.weak_input = true;
    if (residual_) s.residual_input = 3;
    return s;
  }

  // The channels-in-lanes depthwise kernel reads and writes NCHWc: an NCHWc input is its
  // tile's layout (copied, not transposed), an NCHWc output its sums' (stored, not
  // transposed back), so in a region it skips both transposes. Where it is the NCHW
  // choice too (depthwise_prefers_lanes) it transposes its NCHW input anyway: there it
  // may start a region.
  BlockedLayoutSupport depthwise_blocked_layout(const ConvGeometry& g, Isa isa) const {
    const kernels::DepthwiseKernel* k = kernels::find_depthwise_kernel(g, isa, {true, true});
    if (!k) return {};
    BlockedLayoutSupport s;
    s.lanes = k->lanes;
    s.input = s.output = s.preferred = true;
    s.starts_region = kernels::depthwise_prefers_lanes(g, k->lanes);
    if (residual_) s.residual_input = 3;
    return s;
  }

  // Weights [C_out, C_in/group, kh, kw]: output channel c is the c-th block of weights.
  AffineFold fold_channel_affine(const OpSignature& sig, const ChannelAffine& a) const override {
    const Shape& ws = sig.inputs[1].shape();
    const int64_t cout = ws[0], block = num_elements(ws) / cout;
    // An activation or a summed residual follows the product: an affine of the output
    // is then no affine of the weights.
    return fold_affine_into_weights(
        sig, activation_.kind != ActivationKind::kNone || residual_, cout, a, [&](int64_t i) { return i / block; },
        [](const Tensor& bias, int64_t c) { return double(bias.values<float>()[c]); });
  }

 private:
  ConvGeometry geometry(std::span<const OpInput> in) const {
    check_input_count(in, 2, scale_ ? 5 : residual_ ? 4 : 3);
    if (residual_ && (in.size() < 4 || !in[3].present)) throw OpError("the fused residual (input 4) is missing");
    if (!residual_ && in.size() >= 4 && in[3].present)
      throw OpError("input 4 is a fused residual: the node has no 'fused_residual' attribute");
    if (scale_ && (in.size() < 5 || !in[4].present)) throw OpError("the fused input scale (input 5) is missing");
    require_float(in);
    const Shape x = logical_input(in);
    const Shape& w = in[1].shape();
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
    if (in.size() >= 3 && in[2].present && in[2].shape() != Shape{g.cout})
      throw OpError(fmt::format("bias {} must have shape {}", shape_str(in[2].shape()), g.cout));
    if (residual_) {
      const Shape y = output_shape(x, g);
      if (in[3].shape() != y)
        throw OpError(
            fmt::format("residual {} must have the output's shape {}", shape_str(in[3].shape()), shape_str(y)));
    }
    if (scale_ && in[4].shape() != Shape{g.batch, g.cin, 1, 1})
      throw OpError(fmt::format("input scale {} must have shape {}", shape_str(in[4].shape()),
                                shape_str(Shape{g.batch, g.cin, 1, 1})));
    return g;
  }

  // The input's shape as NCHW (or [N, C, L]), whatever its layout.
  Shape logical_input(std::span<const OpInput> in) const {
    return blocked_input_ ? unblocked_shape(in[0].shape(), blocked_input_) : in[0].shape();
  }
  // [N, C_out, H_out, W_out] (or [N, C_out, L_out]), or its NCHWc form.
  Shape output_shape(const Shape& x, const ConvGeometry& g) const {
    const Shape y = window_output_shape(x, g.cout, g.out_h, g.out_w);
    return blocked_output_ ? blocked_shape(y, blocked_output_) : y;
  }

  Activation activation_;               // fused by the fuse_activations pass
  bool residual_ = false;               // fused by the fuse_residual_add pass
  bool scale_ = false;                  // fused by the fuse_channel_scale pass
  bool split_output_channels_ = false;  // set by the thread_splits pass
  WindowAttrs attrs_;
  int64_t group_ = 1;
  int64_t blocked_input_ = 0, blocked_output_ = 0;  // lanes of an NCHWc input / output, 0 for NCHW
  std::string algorithm_ = "auto";                  // the blocked kernel's: "auto", "direct" or "winograd"
};

}  // namespace

std::unique_ptr<Op> make_conv(const Node& node) {
  return std::make_unique<ConvOp>(node);
}

}  // namespace minfer
