// Gemm (ONNX: alpha * A' * B' + beta * C) and MatMul (numpy semantics, batched with
// broadcasting), both on the packed SGEMM of ops/kernels/gemm.h with constant operands
// (weights) packed once in prepare(). Both cost M*K*N MACs per product; Gemm's bias add
// is absorbed.
#include <fmt/format.h>

#include "ops/broadcast.h"
#include "ops/kernels/gemm.h"
#include "ops/op.h"

namespace minfer {
namespace {

kernels::GemmPacked packed_operands(bool a_constant, bool b_constant) {
  if (a_constant && b_constant) return kernels::GemmPacked::kBoth;
  if (a_constant) return kernels::GemmPacked::kA;
  if (b_constant) return kernels::GemmPacked::kB;
  return kernels::GemmPacked::kNone;
}

// The report's view of how the product runs: the micro-kernel, what was packed at load,
// and the activation fused into its epilogue.
nlohmann::json gemm_details(bool a_constant, bool b_constant, const Activation& fused = {}) {
  const char* prepacked = a_constant ? (b_constant ? "A and B" : "A") : (b_constant ? "B" : "none");
  nlohmann::json d = {{"gemm_kernel", kernels::active_gemm_kernel().name}, {"prepacked", prepacked}};
  if (fused.kind != ActivationKind::kNone) d["fused_activation"] = activation_name(fused);
  return d;
}

class GemmOp final : public Op {
 public:
  explicit GemmOp(const Node& node) {
    Attributes attrs = node.attrs;
    activation_ = take_fused_activation(attrs);
    attrs.check_known({"alpha", "beta", "transA", "transB"});
    alpha_ = static_cast<float>(attrs.get_float("alpha", 1.0));
    beta_ = static_cast<float>(attrs.get_float("beta", 1.0));
    trans_a_ = attrs.get_int("transA", 0) != 0;
    trans_b_ = attrs.get_int("transB", 0) != 0;
  }

  std::vector<Shape> infer_shapes(const ArgInfos& in) const override {
    Dims d = dims(in);
    return {{d.m, d.n}};
  }

  Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const override {
    Dims d = dims(in);
    Cost c = data_movement(in, out);
    c.macs = checked_mul({d.m, d.k, d.n});
    c.flops = checked_add({checked_mul({2, c.macs}), checked_mul({activation_.flops_per_element(), d.m, d.n})});
    return c;
  }

  nlohmann::json details(const ArgInfos& in, const std::vector<Shape>&) const override {
    return gemm_details(in[0].constant != nullptr, in[1].constant != nullptr, activation_);
  }

  int64_t workspace_bytes(const ArgInfos& in, const std::vector<Shape>&, int threads) const override {
    Dims d = dims(in);
    return kernels::gemm_workspace_bytes(kernels::active_gemm_kernel(), d.m, d.n, d.k, threads,
                                         packed_operands(in[0].constant != nullptr, in[1].constant != nullptr));
  }

  void prepare(const ArgInfos& in, const std::vector<Shape>& out) override {
    dims_ = dims(in);
    const Dims& d = dims_;
    const kernels::GemmKernel& kernel = kernels::active_gemm_kernel();
    if (in[0].constant)
      packed_a_ = kernels::PackedMatrix::pack_a(kernel, in[0].constant->data.data(), lda(), trans_a_, d.m, d.k);
    if (in[1].constant)
      packed_b_ = kernels::PackedMatrix::pack_b(kernel, in[1].constant->data.data(), ldb(), trans_b_, d.k, d.n);
    if (!d.has_c || beta_ == 0.0f) return;
    // beta * C as the epilogue's bias when C is a row or a column (a layer's bias);
    // otherwise C is copied into Y and the GEMM scales it by beta.
    const Shape& cs = in[2].shape;
    const int64_t c_rows = cs.size() == 2 ? cs[0] : 1, c_cols = cs.empty() ? 1 : cs.back();
    bias_kind_ = c_rows == 1 && c_cols == d.n   ? kernels::GemmBias::kPerColumn
                 : c_cols == 1 && c_rows == d.m ? kernels::GemmBias::kPerRow
                                                : kernels::GemmBias::kNone;
    if (bias_kind_ != kernels::GemmBias::kNone && in[2].constant) {
      for (float v : in[2].constant->data) scaled_bias_.push_back(beta_ * v);
    } else if (bias_kind_ != kernels::GemmBias::kNone && beta_ == 1.0f) {
      bias_is_input_ = true;
    } else {
      bias_kind_ = kernels::GemmBias::kNone;
      c_bcast_ = BroadcastIndex(cs, out[0]);
      copy_c_ = true;
    }
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float> workspace) const override {
    const Dims& d = dims_;
    float* y = out[0].data;
    float beta = 0.0f;
    if (copy_c_) {
      const float* c = in[2].data;
      for (int64_t i = 0; i < d.m * d.n; ++i) y[i] = c[c_bcast_.source(i)];
      beta = beta_;
    }
    kernels::GemmEpilogue epilogue;
    epilogue.bias_kind = bias_kind_;
    epilogue.bias = bias_is_input_ ? in[2].data : scaled_bias_.data();
    epilogue.activation = activation_;
    const kernels::GemmOperand a =
        packed_a_.empty() ? kernels::GemmOperand(in[0].data, lda(), trans_a_) : kernels::GemmOperand(packed_a_);
    const kernels::GemmOperand b =
        packed_b_.empty() ? kernels::GemmOperand(in[1].data, ldb(), trans_b_) : kernels::GemmOperand(packed_b_);
    kernels::gemm(d.m, d.n, d.k, alpha_, a, b, beta, y, d.n, epilogue, workspace, ctx.num_threads);
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
  int64_t lda() const { return trans_a_ ? dims_.m : dims_.k; }
  int64_t ldb() const { return trans_b_ ? dims_.k : dims_.n; }

  Activation activation_;  // fused by the fuse_activations pass
  float alpha_ = 1.0f, beta_ = 1.0f;
  bool trans_a_ = false, trans_b_ = false;
  Dims dims_;
  kernels::PackedMatrix packed_a_, packed_b_;
  kernels::GemmBias bias_kind_ = kernels::GemmBias::kNone;
  std::vector<float> scaled_bias_;  // beta * C, when C is constant
  bool bias_is_input_ = false;      // C (beta == 1) read as the bias at run time
  bool copy_c_ = false;             // any other C: copied into Y, scaled by beta in the GEMM
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

  nlohmann::json details(const ArgInfos& in, const std::vector<Shape>&) const override {
    return gemm_details(false, in[1].constant != nullptr);
  }

  int64_t workspace_bytes(const ArgInfos& in, const std::vector<Shape>&, int threads) const override {
    Dims d = dims(in);
    return kernels::gemm_workspace_bytes(kernels::active_gemm_kernel(), d.m, d.n, d.k, threads,
                                         packed_operands(false, in[1].constant != nullptr));
  }

  void prepare(const ArgInfos& in, const std::vector<Shape>&) override {
    dims_ = dims(in);
    const Dims& d = dims_;
    a_bcast_ = BroadcastIndex(d.a_batch, d.batch_shape);
    b_bcast_ = BroadcastIndex(d.b_batch, d.batch_shape);
    if (in[1].constant) {
      const float* b = in[1].constant->data.data();
      for (int64_t i = 0; i < num_elements(d.b_batch); ++i)
        packed_b_.push_back(
            kernels::PackedMatrix::pack_b(kernels::active_gemm_kernel(), b + i * d.k * d.n, d.n, false, d.k, d.n));
    }
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           std::span<float> workspace) const override {
    const Dims& d = dims_;
    for (int64_t i = 0; i < d.batch; ++i) {
      const int64_t bi = b_bcast_.source(i);
      const kernels::GemmOperand a(in[0].data + a_bcast_.source(i) * d.m * d.k, d.k);
      const kernels::GemmOperand b = packed_b_.empty() ? kernels::GemmOperand(in[1].data + bi * d.k * d.n, d.n)
                                                       : kernels::GemmOperand(packed_b_[bi]);
      kernels::gemm(d.m, d.n, d.k, 1.0f, a, b, 0.0f, out[0].data + i * d.m * d.n, d.n, {}, workspace, ctx.num_threads);
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
  std::vector<kernels::PackedMatrix> packed_b_;  // one per batch matrix of a constant B
};

}  // namespace

std::unique_ptr<Op> make_gemm(const Node& node) { return std::make_unique<GemmOp>(node); }
std::unique_ptr<Op> make_matmul(const Node& node) { return std::make_unique<MatMulOp>(node); }

}  // namespace minfer
