// Gemm (ONNX: alpha * A' * B' + beta * C) and MatMul (numpy semantics, batched with
// broadcasting), both on the packed SGEMM of ops/kernels/gemm.h with constant operands
// (weights) packed once at bind time. Both cost M*K*N MACs per product; Gemm's bias add
// is absorbed.
#include <fmt/format.h>
#include <omp.h>

#include "ops/broadcast.h"
#include "ops/kernels/gemm.h"
#include "ops/kernels/threads.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

kernels::GemmPacked packed_operands(bool a_constant, bool b_constant) {
  if (a_constant && b_constant) return kernels::GemmPacked::kBoth;
  if (a_constant) return kernels::GemmPacked::kA;
  if (b_constant) return kernels::GemmPacked::kB;
  return kernels::GemmPacked::kNone;
}

// The report's view of how the product runs: the micro-kernel, what was packed at
// bind time, the activation fused into its epilogue, and the scratch it needs.
KernelFacts gemm_facts(const kernels::GemmKernel& kernel, int64_t m, int64_t n, int64_t k, int threads, bool a_constant,
                       bool b_constant, const Activation& fused = {}) {
  KernelFacts f;
  f.kernel = "gemm";
  const char* prepacked = a_constant ? (b_constant ? "A and B" : "A") : (b_constant ? "B" : "none");
  f.details = {{"gemm_kernel", kernel.name}, {"prepacked", prepacked}};
  if (fused.kind != ActivationKind::kNone) f.details["fused_activation"] = activation_name(fused);
  f.workspace_bytes = kernels::gemm_workspace_bytes(kernel, m, n, k, threads, packed_operands(a_constant, b_constant));
  return f;
}

struct GemmDims {
  int64_t m = 0, n = 0, k = 0;
  bool has_c = false;
};

struct GemmParams {
  Activation activation;
  float alpha = 1.0f, beta = 1.0f;
  bool trans_a = false, trans_b = false;
};

class GemmOpKernel final : public Kernel {
 public:
  GemmOpKernel(const GemmParams& p, const GemmDims& d, const OpSignature& sig, const kernels::GemmKernel& kernel,
               int threads)
      : Kernel(
            gemm_facts(kernel, d.m, d.n, d.k, threads, sig.inputs[0].constant, sig.inputs[1].constant, p.activation)),
        p_(p),
        d_(d),
        kernel_(&kernel) {
    if (const Tensor* a = sig.inputs[0].constant)
      packed_a_ = kernels::PackedMatrix::pack_a(kernel, a->values<float>().data(), lda(), p.trans_a, d.m, d.k);
    if (const Tensor* b = sig.inputs[1].constant)
      packed_b_ = kernels::PackedMatrix::pack_b(kernel, b->values<float>().data(), ldb(), p.trans_b, d.k, d.n);
    if (!d.has_c || p.beta == 0.0f) return;
    // beta * C as the epilogue's bias when C is a row or a column (a layer's bias);
    // otherwise C is copied into Y and the GEMM scales it by beta.
    const Shape& cs = sig.inputs[2].shape();
    const int64_t c_rows = cs.size() == 2 ? cs[0] : 1, c_cols = cs.empty() ? 1 : cs.back();
    bias_kind_ = c_rows == 1 && c_cols == d.n   ? kernels::GemmBias::kPerColumn
                 : c_cols == 1 && c_rows == d.m ? kernels::GemmBias::kPerRow
                                                : kernels::GemmBias::kNone;
    if (bias_kind_ != kernels::GemmBias::kNone && sig.inputs[2].constant) {
      for (float v : sig.inputs[2].constant->values<float>()) scaled_bias_.push_back(p.beta * v);
    } else if (bias_kind_ != kernels::GemmBias::kNone && p.beta == 1.0f) {
      bias_is_input_ = true;
    } else {
      bias_kind_ = kernels::GemmBias::kNone;
      c_bcast_ = BroadcastIndex(cs, sig.outputs[0].shape());
      copy_c_ = true;
    }
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           Workspace workspace) const override {
    const GemmDims& d = d_;
    float* y = out[0].f32();
    float beta = 0.0f;
    if (copy_c_) {
      const float* c = in[2].f32();
      for (int64_t i = 0; i < d.m * d.n; ++i) y[i] = c[c_bcast_.source(i)];
      beta = p_.beta;
    }
    kernels::GemmEpilogue epilogue;
    epilogue.bias_kind = bias_kind_;
    epilogue.bias = bias_is_input_ ? in[2].f32() : scaled_bias_.data();
    epilogue.activation = p_.activation;
    const kernels::GemmOperand a =
        packed_a_.empty() ? kernels::GemmOperand(in[0].f32(), lda(), p_.trans_a) : kernels::GemmOperand(packed_a_);
    const kernels::GemmOperand b =
        packed_b_.empty() ? kernels::GemmOperand(in[1].f32(), ldb(), p_.trans_b) : kernels::GemmOperand(packed_b_);
    kernels::gemm(d.m, d.n, d.k, p_.alpha, a, b, beta, y, d.n, epilogue, workspace.floats(), ctx.num_threads, *kernel_);
  }

 private:
  int64_t lda() const { return p_.trans_a ? d_.m : d_.k; }
  int64_t ldb() const { return p_.trans_b ? d_.k : d_.n; }

  const GemmParams p_;
  const GemmDims d_;
  const kernels::GemmKernel* kernel_;
  kernels::PackedMatrix packed_a_, packed_b_;
  kernels::GemmBias bias_kind_ = kernels::GemmBias::kNone;
  std::vector<float> scaled_bias_;  // beta * C, when C is constant
  bool bias_is_input_ = false;      // C (beta == 1) read as the bias at run time
  bool copy_c_ = false;             // any other C: copied into Y, scaled by beta in the GEMM
  BroadcastIndex c_bcast_;
};

class GemmOp final : public Op {
 public:
  explicit GemmOp(const Node& node) : attrs_(node.attrs) {
    Attributes attrs = node.attrs;
    p_.activation = take_fused_activation(attrs);
    attrs.check_known({"alpha", "beta", "transA", "transB"});
    p_.alpha = static_cast<float>(attrs.get_float("alpha", 1.0));
    p_.beta = static_cast<float>(attrs.get_float("beta", 1.0));
    p_.trans_a = attrs.get_int("transA", 0) != 0;
    p_.trans_b = attrs.get_int("transB", 0) != 0;
  }

  OpTraits traits() const override {
    OpTraits t;
    t.fuses_activation = true;
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const GemmDims d = dims(in);
    return {{DType::kFloat32, {d.m, d.n}}};
  }

  OpCost cost(const OpSignature& sig) const override {
    const GemmDims d = dims(sig.inputs);
    const CostExpr macs = CostExpr::of("M", d.m) * CostExpr::of("K", d.k) * CostExpr::of("N", d.n);
    return op_cost(*this, sig, macs, product_flops(macs, p_.activation, checked_mul({d.m, d.n})));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    return std::make_unique<GemmOpKernel>(p_, dims(sig.inputs), sig, kernels::gemm_kernel(ctx.isa), ctx.num_threads);
  }

  // B [K, N] (or [N, K] with transB): output channel n is column n of B. The old bias
  // per channel is beta * C; the folded one is the bias, with beta 1.
  AffineFold fold_channel_affine(const OpSignature& sig, const ChannelAffine& a) const override {
    const bool has_c = sig.inputs.size() > 2 && sig.inputs[2].present;
    if (has_c) {
      const Shape& c = sig.inputs[2].shape();
      if (c.size() == 2 && c[0] != 1) return {std::nullopt, "whose bias C varies along rows"};
    }
    const Shape& ws = sig.inputs[1].shape();
    AffineFold fold = fold_affine_into_weights(
        sig, p_.activation.kind != ActivationKind::kNone, p_.trans_b ? ws[0] : ws[1], a,
        [&](int64_t i) { return p_.trans_b ? i / ws[1] : i % ws[1]; },
        [&](const Tensor& c, int64_t n) { return double(p_.beta) * c.values<float>()[c.size() == 1 ? 0 : n]; });
    if (fold.folded) {
      fold.folded->attributes = attrs_;
      fold.folded->attributes->set("beta", 1.0);
    }
    return fold;
  }

 private:
  GemmDims dims(std::span<const OpInput> in) const {
    check_input_count(in, 2, 3);
    require_float(in);
    const Shape& a = in[0].shape();
    const Shape& b = in[1].shape();
    if (a.size() != 2 || b.size() != 2)
      throw OpError(fmt::format("A {} and B {} must both be 2-D", shape_str(a), shape_str(b)));
    GemmDims d;
    d.m = p_.trans_a ? a[1] : a[0];
    d.k = p_.trans_a ? a[0] : a[1];
    int64_t kb = p_.trans_b ? b[1] : b[0];
    d.n = p_.trans_b ? b[0] : b[1];
    if (kb != d.k)
      throw OpError(fmt::format("inner dimensions differ: A {} (transA={}) and B {} (transB={})", shape_str(a),
                                int(p_.trans_a), shape_str(b), int(p_.trans_b)));
    d.has_c = in.size() == 3 && in[2].present;
    if (d.has_c && broadcast_shapes(in[2].shape(), Shape{d.m, d.n}) != Shape{d.m, d.n})
      throw OpError(fmt::format("C {} does not broadcast to [{},{}]", shape_str(in[2].shape()), d.m, d.n));
    return d;
  }

  Attributes attrs_;  // the node's, which a fold changes (beta)
  GemmParams p_;
};

struct MatMulDims {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  Shape a_batch, b_batch, batch_shape, out;
};

// Where one B serves every batch matrix (B has no batch dims but ones), A's matrices are
// consecutive rows of one [batch * M, K] matrix and the output's of [batch * M, N]: one
// GEMM of them all. ConvNeXt's [1, 14, 14, 384] x [384, 1536] layers took 14 GEMMs of 14
// rows each, which two threads split no better than 1.2x.
int64_t gemm_rows(const MatMulDims& d) {
  return num_elements(d.b_batch) == 1 ? d.batch * d.m : d.m;
}

// Threads that split the matrices of a batched product among them, each GEMM on one thread,
// where there are separate GEMMs (gemm_rows) and they share evenly: every matrix or a
// thread's run of them read and written by that thread alone. Split inside each, ViT-B/16's
// attention products (12 heads of 197 x 64 x 197) took as long on two threads as on one.
int batch_team(const MatMulDims& d, int threads) {
  if (d.batch < 2 || gemm_rows(d) != d.m) return 1;
  const int team =
      kernels::threads_worth_starting(checked_mul({d.batch, d.m, d.n, d.k}), d.batch, threads, kernels::Work::kDense);
  return d.batch % team == 0 || d.batch >= 4 * team ? team : 1;
}

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(const MatMulDims& d, const Tensor* constant_b, const kernels::GemmKernel& kernel, int threads,
               const Activation& activation, bool bias)
      : Kernel(gemm_facts(kernel, gemm_rows(d), d.n, d.k, threads, false, constant_b, activation)),
        d_(d),
        kernel_(&kernel),
        activation_(activation),
        bias_(bias),
        a_bcast_(d.a_batch, d.batch_shape),
        b_bcast_(d.b_batch, d.batch_shape),
        batch_team_(batch_team(d, threads)),
        // Whole cache lines, so that no two threads' slices share one.
        matrix_floats_(
            (kernels::gemm_workspace_bytes(kernel, d.m, d.n, d.k, 1, packed_operands(false, constant_b)) + 63) / 64 *
            16) {
    if (batch_team_ > 1) {
      mutable_facts().workspace_bytes =
          std::max<int64_t>(mutable_facts().workspace_bytes, batch_team_ * matrix_floats_ * int64_t{sizeof(float)});
      mutable_facts().details["batch_threads"] = batch_team_;
    }
    if (!constant_b) return;
    const float* b = constant_b->values<float>().data();
    for (int64_t i = 0; i < num_elements(d.b_batch); ++i)
      packed_b_.push_back(kernels::PackedMatrix::pack_b(kernel, b + i * d.k * d.n, d.n, false, d.k, d.n));
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           Workspace workspace) const override {
    const MatMulDims& d = d_;
    kernels::GemmEpilogue epilogue;
    epilogue.activation = activation_;
    if (bias_) {
      epilogue.bias_kind = kernels::GemmBias::kPerColumn;
      epilogue.bias = in[2].f32();
    }
    if (const int64_t rows = gemm_rows(d); d.batch > 1 && rows != d.m) {
      const kernels::GemmOperand b =
          packed_b_.empty() ? kernels::GemmOperand(in[1].f32(), d.n) : kernels::GemmOperand(packed_b_[0]);
      kernels::gemm(rows, d.n, d.k, 1.0f, kernels::GemmOperand(in[0].f32(), d.k), b, 0.0f, out[0].f32(), d.n, epilogue,
                    workspace.floats(), ctx.num_threads, *kernel_);
      return;
    }
    const auto product = [&](int64_t i, std::span<float> scratch, int threads) {
      const int64_t bi = b_bcast_.source(i);
      const kernels::GemmOperand a(in[0].f32() + a_bcast_.source(i) * d.m * d.k, d.k);
      const kernels::GemmOperand b = packed_b_.empty() ? kernels::GemmOperand(in[1].f32() + bi * d.k * d.n, d.n)
                                                       : kernels::GemmOperand(packed_b_[bi]);
      kernels::gemm(d.m, d.n, d.k, 1.0f, a, b, 0.0f, out[0].f32() + i * d.m * d.n, d.n, epilogue, scratch, threads,
                    *kernel_);
    };
    const int team = std::min(batch_team_, ctx.num_threads);
    if (team <= 1) {
      for (int64_t i = 0; i < d.batch; ++i) product(i, workspace.floats(), ctx.num_threads);
      return;
    }
    // Each thread its matrices whole, on one thread (gemm runs one inside a parallel
    // region), in its own slice of the workspace.
    kernels::for_each_on_team(team, d.batch, [&](int64_t i) {
      product(i, workspace.floats().subspan(omp_get_thread_num() * matrix_floats_, matrix_floats_), 1);
    });
  }

 private:
  const MatMulDims d_;
  const kernels::GemmKernel* kernel_;
  const Activation activation_;
  const bool bias_;  // input 2, [N], added to every row
  const BroadcastIndex a_bcast_, b_bcast_;
  const int batch_team_;                         // threads that split the batch matrices (1: each GEMM splits its own)
  const int64_t matrix_floats_;                  // one thread's workspace for one matrix's GEMM
  std::vector<kernels::PackedMatrix> packed_b_;  // one per batch matrix of a constant B
};

class MatMulOp final : public Op {
 public:
  explicit MatMulOp(const Node& node) {
    Attributes attrs = node.attrs;
    activation_ = take_fused_activation(attrs);
    // Set by fuse_matmul_bias: a third input of N elements is added to every row.
    bias_ = attrs.get_int("fused_bias", 0) != 0;
    attrs.check_known({"fused_bias"});
  }

  OpTraits traits() const override {
    OpTraits t;
    t.fuses_activation = true;
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    return {{DType::kFloat32, dims(in).out}};
  }

  OpCost cost(const OpSignature& sig) const override {
    const MatMulDims d = dims(sig.inputs);
    const CostExpr macs =
        CostExpr::of("batch", d.batch) * CostExpr::of("M", d.m) * CostExpr::of("K", d.k) * CostExpr::of("N", d.n);
    const int64_t outputs = num_elements(d.out);
    CostExpr flops = product_flops(macs, activation_, outputs);
    if (bias_)  // the fused Add's FLOPs (docs/cost-model.md)
      flops = flops + CostExpr::of("bias add FLOPs/element", 1) * CostExpr::of("output elements", outputs);
    return op_cost(*this, sig, macs, flops);
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    return std::make_unique<MatMulKernel>(dims(sig.inputs), sig.inputs[1].constant, kernels::gemm_kernel(ctx.isa),
                                          ctx.num_threads, activation_, bias_);
  }

 private:
  // numpy matmul: a 1-D operand gains a unit dim (then loses it in the output); the
  // leading dims broadcast. A fused bias holds N elements, along its last axis.
  MatMulDims dims(std::span<const OpInput> in) const {
    check_input_count(in, bias_ ? 3 : 2, bias_ ? 3 : 2);
    require_float(in);
    Shape a = in[0].shape(), b = in[1].shape();
    if (a.empty() || b.empty()) throw OpError("MatMul operands must have rank at least 1");
    const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
    if (a_vec) a.insert(a.begin(), 1);
    if (b_vec) b.push_back(1);
    MatMulDims d;
    d.m = a[a.size() - 2];
    d.k = a[a.size() - 1];
    d.n = b[b.size() - 1];
    if (b[b.size() - 2] != d.k)
      throw OpError(
          fmt::format("inner dimensions differ: {} x {}", shape_str(in[0].shape()), shape_str(in[1].shape())));
    d.a_batch.assign(a.begin(), a.end() - 2);
    d.b_batch.assign(b.begin(), b.end() - 2);
    d.batch_shape = broadcast_shapes(d.a_batch, d.b_batch);
    d.batch = num_elements(d.batch_shape);
    d.out = d.batch_shape;
    if (!a_vec) d.out.push_back(d.m);
    if (!b_vec) d.out.push_back(d.n);
    if (bias_) {
      const Shape& c = in[2].shape();
      if (num_elements(c) != d.n || (!c.empty() && c.back() != d.n))
        throw OpError(fmt::format("the fused bias {} must hold the product's {} columns", shape_str(c), d.n));
    }
    return d;
  }

  Activation activation_;
  bool bias_ = false;
};

}  // namespace

std::unique_ptr<Op> make_gemm(const Node& node) {
  return std::make_unique<GemmOp>(node);
}
std::unique_ptr<Op> make_matmul(const Node& node) {
  return std::make_unique<MatMulOp>(node);
}

}  // namespace minfer
