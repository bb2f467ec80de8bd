// Softmax and LogSoftmax along one axis (opset 13 semantics; default axis -1).
// FLOPs per element: max, subtract, exp, add, divide (or log-subtract) = 5.
#include <cmath>

#include <fmt/format.h>

#include "ops/op.h"

namespace minfer {
namespace {

class SoftmaxOp final : public Op {
 public:
  SoftmaxOp(const Node& node, bool log) : log_(log) {
    node.attrs.check_known({"axis"});
    axis_ = node.attrs.get_int("axis", -1);
  }

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    check_input_count(in, 1, 1);
    resolved_axis(in[0].shape);
    return {in[0].shape};
  }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    Cost c = data_movement(in, out);
    c.flops = 5 * num_elements(out[0]);
    return c;
  }

  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float>) const override {
    const Shape& s = in[0].shape;
    const size_t axis = resolved_axis(s);
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= s[i];
    for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
    const int64_t n = s[axis];
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const float* x = in[0].data + o * n * inner + i;
        float* y = out[0].data + o * n * inner + i;
        float max = x[0];
        for (int64_t j = 1; j < n; ++j) max = std::max(max, x[j * inner]);
        float sum = 0.0f;
        for (int64_t j = 0; j < n; ++j) {
          const float e = std::exp(x[j * inner] - max);
          sum += e;
          if (!log_) y[j * inner] = e;
        }
        if (log_) {
          const float log_sum = std::log(sum);
          for (int64_t j = 0; j < n; ++j) y[j * inner] = x[j * inner] - max - log_sum;
        } else {
          for (int64_t j = 0; j < n; ++j) y[j * inner] /= sum;
        }
      }
    }
  }

 private:
  size_t resolved_axis(const Shape& s) const {
    const int64_t rank = static_cast<int64_t>(s.size());
    const int64_t a = axis_ < 0 ? axis_ + rank : axis_;
    if (a < 0 || a >= rank) throw OpError(fmt::format("axis {} is out of range for rank {}", axis_, rank));
    return static_cast<size_t>(a);
  }

  bool log_;
  int64_t axis_;
};

}  // namespace

std::unique_ptr<Op> make_softmax(const Node& node) { return std::make_unique<SoftmaxOp>(node, false); }
std::unique_ptr<Op> make_log_softmax(const Node& node) { return std::make_unique<SoftmaxOp>(node, true); }

}  // namespace minfer
