// Element-wise binary ops with ONNX broadcasting: Add, Sub, Mul, Div (1 FLOP per
// output element), PRelu (2: compare and multiply), and variadic Sum.
#include <fmt/format.h>

#include "ops/broadcast.h"
#include "ops/op.h"

namespace minfer {
namespace {

struct AddFn {
  float operator()(float a, float b) const { return a + b; }
};
struct SubFn {
  float operator()(float a, float b) const { return a - b; }
};
struct MulFn {
  float operator()(float a, float b) const { return a * b; }
};
struct DivFn {
  float operator()(float a, float b) const { return a / b; }
};
struct PReluFn {
  float operator()(float x, float slope) const { return x < 0.0f ? slope * x : x; }
};

// y = fn(a, b) over the broadcast shape; each output row reads its inputs with an
// inner stride of 0 or 1, so the common cases run as plain loops.
template <typename Fn>
void broadcast_apply(const float* a, const BroadcastIndex& ia, const float* b, const BroadcastIndex& ib, float* y,
                     int64_t total) {
  Fn fn;
  const int64_t inner = ia.inner_size();
  const int64_t sa = ia.inner_stride(), sb = ib.inner_stride();
  for (int64_t row = 0; row < total; row += inner) {
    const float* pa = a + ia.source(row);
    const float* pb = b + ib.source(row);
    float* py = y + row;
    if (sa == 1 && sb == 1) {
      for (int64_t j = 0; j < inner; ++j) py[j] = fn(pa[j], pb[j]);
    } else if (sa == 1) {
      const float vb = *pb;
      for (int64_t j = 0; j < inner; ++j) py[j] = fn(pa[j], vb);
    } else if (sb == 1) {
      const float va = *pa;
      for (int64_t j = 0; j < inner; ++j) py[j] = fn(va, pb[j]);
    } else {
      const float v = fn(*pa, *pb);
      for (int64_t j = 0; j < inner; ++j) py[j] = v;
    }
  }
}

template <typename Fn>
class BinaryOp final : public Op {
 public:
  BinaryOp(const Node& node, int64_t flops_per_element) : flops_per_element_(flops_per_element) {
    node.attrs.check_known({});
  }

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    check_input_count(in, 2, 2);
    return {broadcast_shapes(in[0].shape, in[1].shape)};
  }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    Cost c = data_movement(in, out);
    c.flops = flops_per_element_ * num_elements(out[0]);
    return c;
  }

  void prepare(const ArgInfos& in, const std::vector<Shape>& out) override {
    ia_ = BroadcastIndex(in[0].shape, out[0]);
    ib_ = BroadcastIndex(in[1].shape, out[0]);
  }

  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float>) const override {
    broadcast_apply<Fn>(in[0].data, ia_, in[1].data, ib_, out[0].data, out[0].size());
  }

  // The output may overwrite input 0 when it has the output's shape: each element is
  // read before it is written.
  int inplace_input() const override { return 0; }

 private:
  int64_t flops_per_element_;
  BroadcastIndex ia_, ib_;
};

// Sum of any number of inputs (broadcast): one add per output element per extra input.
class SumOp final : public Op {
 public:
  explicit SumOp(const Node& node) { node.attrs.check_known({}); }

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    if (in.empty()) throw OpError("Sum needs at least one input");
    Shape s = required_shape(in, 0, "data_0");
    for (size_t i = 1; i < in.size(); ++i) s = broadcast_shapes(s, required_shape(in, i, "data"));
    return {s};
  }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    Cost c = data_movement(in, out);
    c.flops = static_cast<int64_t>(in.size() - 1) * num_elements(out[0]);
    return c;
  }

  void prepare(const ArgInfos& in, const std::vector<Shape>& out) override {
    index_.clear();
    for (const ArgInfo& a : in) index_.emplace_back(a.shape, out[0]);
    identity_ = BroadcastIndex(out[0], out[0]);
    scalar_ = BroadcastIndex(Shape{}, out[0]);
  }

  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float>) const override {
    float* y = out[0].data;
    const int64_t total = out[0].size();
    const float zero = 0.0f;
    // y = 0 + in0, then y += in_i: each step is a broadcast add with y itself.
    broadcast_apply<AddFn>(&zero, scalar_, in[0].data, index_[0], y, total);
    for (size_t i = 1; i < in.size(); ++i) broadcast_apply<AddFn>(y, identity_, in[i].data, index_[i], y, total);
  }

 private:
  std::vector<BroadcastIndex> index_;
  BroadcastIndex identity_, scalar_;
};

}  // namespace

std::unique_ptr<Op> make_add(const Node& node) { return std::make_unique<BinaryOp<AddFn>>(node, 1); }
std::unique_ptr<Op> make_sub(const Node& node) { return std::make_unique<BinaryOp<SubFn>>(node, 1); }
std::unique_ptr<Op> make_mul(const Node& node) { return std::make_unique<BinaryOp<MulFn>>(node, 1); }
std::unique_ptr<Op> make_div(const Node& node) { return std::make_unique<BinaryOp<DivFn>>(node, 1); }
std::unique_ptr<Op> make_prelu(const Node& node) { return std::make_unique<BinaryOp<PReluFn>>(node, 2); }
std::unique_ptr<Op> make_sum(const Node& node) { return std::make_unique<SumOp>(node); }

}  // namespace minfer
