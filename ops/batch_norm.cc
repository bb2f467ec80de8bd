// BatchNormalization at inference: y = (x - mean) / sqrt(var + eps) * scale + B, run as
// a per-channel scale and shift (2 FLOPs per element). The fold_bn pass removes it
// where it follows a Conv, ConvTranspose or Gemm.
#include <cmath>

#include <fmt/format.h>

#include "ops/op.h"

namespace minfer {
namespace {

class BatchNormOp final : public Op {
 public:
  explicit BatchNormOp(const Node& node) {
    node.attrs.check_known({"epsilon", "momentum", "training_mode", "spatial"});
    epsilon_ = static_cast<float>(node.attrs.get_float("epsilon", 1e-5));
    if (node.attrs.get_int("training_mode", 0) != 0)
      throw UnsupportedError("training_mode=1 is not supported (inference only)");
    if (node.attrs.get_int("spatial", 1) != 1) throw UnsupportedError("spatial=0 is not supported");
    if (node.outputs.size() > 1) throw UnsupportedError("running mean/var outputs (training mode) are not supported");
  }

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    check_input_count(in, 5, 5);
    const Shape& x = in[0].shape;
    if (x.size() < 2) throw OpError(fmt::format("input must be at least 2-D [N,C,...], got {}", shape_str(x)));
    static const char* names[] = {"X", "scale", "B", "mean", "var"};
    for (size_t i = 1; i < 5; ++i)
      if (in[i].shape != Shape{x[1]})
        throw OpError(fmt::format("{} has shape {}, expected [{}] (the input's channels)", names[i],
                                  shape_str(in[i].shape), x[1]));
    return {x};
  }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    Cost c = data_movement(in, out);
    c.flops = 2 * num_elements(out[0]);
    return c;
  }

  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float>) const override {
    const Shape& x = in[0].shape;
    const int64_t batch = x[0], channels = x[1];
    const int64_t plane = in[0].size() / (batch * channels);
    const float *scale = in[1].data, *shift = in[2].data, *mean = in[3].data, *var = in[4].data;
    for (int64_t c = 0; c < channels; ++c) {
      const float a = scale[c] / std::sqrt(var[c] + epsilon_);
      const float b = shift[c] - mean[c] * a;
      for (int64_t n = 0; n < batch; ++n) {
        const float* src = in[0].data + (n * channels + c) * plane;
        float* dst = out[0].data + (n * channels + c) * plane;
        for (int64_t i = 0; i < plane; ++i) dst[i] = src[i] * a + b;
      }
    }
  }

  int inplace_input() const override { return 0; }

 private:
  float epsilon_;
};

}  // namespace

std::unique_ptr<Op> make_batch_normalization(const Node& node) { return std::make_unique<BatchNormOp>(node); }

}  // namespace minfer
