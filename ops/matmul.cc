// Gemm (ONNX: alpha * A' * B' + beta * C) and MatMul (numpy semantics, batched with
// broadcasting). Both cost M*K*N MACs per product; Gemm's bias add is absorbed.
#include <fmt/format.h>

#include "ops/broadcast.h"
#include "ops/op.h"
#include "ops/reference/gemm.h"

namespace minfer {
namespace {

class GemmOp final : public Op {
 public:
  explicit GemmOp(const Node& node) {
    node.attrs.check_known({"alpha", "beta", "transA", "transB"});
    alpha_ = static_cast<float>(node.attrs.get_float("alpha", 1.0));
    beta_ = static_cast<float>(node.attrs.get_float("beta", 1.0));
    trans_a_ = node.attrs.get_int("transA", 0) != 0;
    trans_b_ = node.attrs.get_int("transB", 0) != 0;
  }

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    Dims d = dims(in);
    return {{d.m, d.n}};
  }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    Dims d = dims(in);
    Cost c = data_movement(in, out);
    c.macs = checked_mul({d.m, d.k, d.n});
    c.flops = checked_mul({2, c.macs});
    return c;
  }

  void prepare(const ArgInfos& in, const std::vector<Shape>& out) override {
    dims_ = dims(in);
    if (dims_.has_c) c_bcast_ = BroadcastIndex(in[2].shape, out[0]);
  }

  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float>) const override {
    const Dims& d = dims_;
    float* y = out[0].data;
    float beta = 0.0f;
    if (d.has_c && beta_ != 0.0f) {
      const float* c = in[2].data;
      for (int64_t i = 0; i < d.m * d.n; ++i) y[i] = c[c_bcast_.source(i)];
      beta = beta_;
    }
    const int64_t lda = trans_a_ ? d.m : d.k, ldb = trans_b_ ? d.k : d.n;
    reference::gemm(trans_a_, trans_b_, d.m, d.n, d.k, alpha_, in[0].data, lda, in[1].data, ldb, beta, y, d.n);
  }

 private:
  struct Dims {
    int64_t m = 0, n = 0, k = 0;
    bool has_c = false;
  };

  Dims dims(const ArgInfos& in) const {
    check_input_count(in, 2, 3);
    const Shape& a = in[0].shape;
    const Shape& b = in[1].shape;
    if (a.size() != 2 || b.size() != 2)
      throw OpError(fmt::format("A {} and B {} must both be 2-D", shape_str(a), shape_str(b)));
    Dims d;
    d.m = trans_a_ ? a[1] : a[0];
    d.k = trans_a_ ? a[0] : a[1];
    int64_t kb = trans_b_ ? b[1] : b[0];
    d.n = trans_b_ ? b[0] : b[1];
    if (kb != d.k)
      throw OpError(fmt::format("inner dimensions differ: A {} (transA={}) and B {} (transB={})", shape_str(a),
                                int(trans_a_), shape_str(b), int(trans_b_)));
    d.has_c = in.size() == 3 && in[2].present;
    if (d.has_c && broadcast_shapes(in[2].shape, Shape{d.m, d.n}) != Shape{d.m, d.n})
      throw OpError(fmt::format("C {} does not broadcast to [{},{}]", shape_str(in[2].shape), d.m, d.n));
    return d;
  }

  float alpha_ = 1.0f, beta_ = 1.0f;
  bool trans_a_ = false, trans_b_ = false;
  Dims dims_;
  BroadcastIndex c_bcast_;
};

class MatMulOp final : public Op {
 public:
  explicit MatMulOp(const Node& node) { node.attrs.check_known({}); }

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override { return {dims(in).out}; }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    Dims d = dims(in);
    Cost c = data_movement(in, out);
    c.macs = checked_mul({d.batch, d.m, d.k, d.n});
    c.flops = checked_mul({2, c.macs});
    return c;
  }

  void prepare(const ArgInfos& in, const std::vector<Shape>&) override {
    dims_ = dims(in);
    a_bcast_ = BroadcastIndex(dims_.a_batch, dims_.batch_shape);
    b_bcast_ = BroadcastIndex(dims_.b_batch, dims_.batch_shape);
  }

  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float>) const override {
    const Dims& d = dims_;
    for (int64_t i = 0; i < d.batch; ++i) {
      const float* a = in[0].data + a_bcast_.source(i) * d.m * d.k;
      const float* b = in[1].data + b_bcast_.source(i) * d.k * d.n;
      reference::gemm(false, false, d.m, d.n, d.k, 1.0f, a, d.k, b, d.n, 0.0f, out[0].data + i * d.m * d.n, d.n);
    }
  }

 private:
  struct Dims {
    int64_t batch = 1, m = 0, k = 0, n = 0;
    Shape a_batch, b_batch, batch_shape, out;
  };

  // numpy matmul: a 1-D operand gains a unit dim (then loses it in the output); the
  // leading dims broadcast.
  static Dims dims(const ArgInfos& in) {
    check_input_count(in, 2, 2);
    Shape a = in[0].shape, b = in[1].shape;
    if (a.empty() || b.empty()) throw OpError("MatMul operands must have rank at least 1");
    const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
    if (a_vec) a.insert(a.begin(), 1);
    if (b_vec) b.push_back(1);
    Dims d;
    d.m = a[a.size() - 2];
    d.k = a[a.size() - 1];
    d.n = b[b.size() - 1];
    if (b[b.size() - 2] != d.k)
      throw OpError(fmt::format("inner dimensions differ: {} x {}", shape_str(in[0].shape), shape_str(in[1].shape)));
    d.a_batch.assign(a.begin(), a.end() - 2);
    d.b_batch.assign(b.begin(), b.end() - 2);
    d.batch_shape = broadcast_shapes(d.a_batch, d.b_batch);
    d.batch = num_elements(d.batch_shape);
    d.out = d.batch_shape;
    if (!a_vec) d.out.push_back(d.m);
    if (!b_vec) d.out.push_back(d.n);
    return d;
  }

  Dims dims_;
  BroadcastIndex a_bcast_, b_bcast_;
};

}  // namespace

std::unique_ptr<Op> make_gemm(const Node& node) { return std::make_unique<GemmOp>(node); }
std::unique_ptr<Op> make_matmul(const Node& node) { return std::make_unique<MatMulOp>(node); }

}  // namespace minfer
