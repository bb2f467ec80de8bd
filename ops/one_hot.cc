// OneHot (F.one_hot; ONNX opset 11): for each index, `depth` values along a new axis at
// `axis`, values[1] at the index and values[0] elsewhere. An index in [-depth, -1]
// counts from the end; one outside [-depth, depth) sets none (ONNX's rule). The indices
// are int64 or float32 (whole numbers), depth a constant, values a constant pair
// [off, on] of float32 or int64, which is the output's type. No FLOPs: it writes.
#include <fmt/format.h>

#include <cmath>

#include "ops/op_helpers.h"

namespace minfer {
namespace {

class OneHotOp final : public Op {
 public:
  explicit OneHotOp(const Node& node) {
    node.attrs.check_known({"axis"});
    axis_ = node.attrs.get_int("axis", -1);
  }

  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = 0b110;  // depth, values
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 3, 3);
    if (in[0].dtype() == DType::kBool) throw OpError("indices must be numbers, got bool");
    if (!in[2].constant || num_elements(in[2].shape()) != 2 || in[2].dtype() == DType::kBool)
      throw UnsupportedError("values must be a constant pair [off, on] of float32 or int64");
    Shape y = in[0].shape();
    y.insert(y.begin() + static_cast<std::ptrdiff_t>(axis(in)), depth(in));
    return {{in[2].dtype(), y}};
  }

  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& x = sig.inputs[0].shape();
    const size_t a = axis(sig.inputs);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < x.size(); ++d) (d < a ? outer : inner) *= x[d];
    const Tensor& values = *sig.inputs[2].constant;
    const bool int64 = values.dtype() == DType::kInt64;
    const double off = int64 ? static_cast<double>(values.values<int64_t>()[0]) : values.values<float>()[0];
    const double on = int64 ? static_cast<double>(values.values<int64_t>()[1]) : values.values<float>()[1];
    return make_kernel(
        {}, [outer, inner, depth = depth(sig.inputs), int64, off, on,
             float_indices = sig.inputs[0].dtype() == DType::kFloat32](
                const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out, Workspace) {
          const auto fill = [&]<typename T>(T* y) {
            std::fill_n(y, outer * depth * inner, static_cast<T>(off));
            for (int64_t o = 0; o < outer; ++o)
              for (int64_t i = 0; i < inner; ++i) {
                const int64_t at = o * inner + i;
                int64_t k = float_indices ? static_cast<int64_t>(std::trunc(in[0].f32()[at])) : in[0].as<int64_t>()[at];
                if (k < 0) k += depth;
                if (k >= 0 && k < depth) y[(o * depth + k) * inner + i] = static_cast<T>(on);
              }
          };
          if (int64) return fill(out[0].as<int64_t>());
          fill(out[0].f32());
        });
  }

 private:
  size_t axis(std::span<const OpInput> in) const {
    return static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(in[0].shape().size()) + 1));
  }

  static int64_t depth(std::span<const OpInput> in) {
    const std::vector<int64_t> d = constant_ints(in, 1, "depth");
    if (d.size() != 1 || d[0] < 1) throw OpError("depth must be one positive number");
    return d[0];
  }

  int64_t axis_ = -1;
};

}  // namespace

std::unique_ptr<Op> make_one_hot(const Node& node) {
  return std::make_unique<OneHotOp>(node);
}

}  // namespace minfer
