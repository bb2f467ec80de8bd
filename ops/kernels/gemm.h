// The fast single-precision GEMM: packed, cache-blocked (GotoBLAS/BLIS loop order), with
// an xsimd register-tiled micro-kernel chosen for the CPU at run time, OpenMP threads,
// constant operands packed once, and a bias + activation epilogue.
//
//   C[M,N] = act(alpha * op(A)[M,K] * op(B)[K,N] + beta * C + bias + addend),   all row-major.
//
// Typical use by an op (see docs/performance.md for the conv and LSTM recipes):
//   bind:               weights_ = PackedMatrix::pack_a(gemm_kernel(ctx.isa), w, k, false, m, k);
//   workspace_bytes():  gemm_workspace_bytes(weights_.kernel(), m, n, k, threads, GemmPacked::kA)
//   run():              gemm(m, n, k, 1.0f, weights_, GemmOperand(x, n), 0.0f, y, n, epilogue, workspace, threads);
#pragma once

#include <cstdint>
#include <span>

#include "graph/aligned_buffer.h"
#include "ops/activation.h"
#include "ops/kernels/gemm_kernel.h"

namespace minfer::kernels {

// The kernel for one target, or nullptr when this CPU cannot run it. For tests and
// benchmarks that compare targets.
const GemmKernel* gemm_kernel_for(Isa isa);
// The kernel of a target this CPU runs (ops pass BindContext::isa); throws otherwise.
const GemmKernel& gemm_kernel(Isa isa);
// gemm_kernel(active_isa()): for tests and benchmarks.
const GemmKernel& active_gemm_kernel();

// op(A) or op(B) packed once into the panels a kernel reads (weights packed in prepare()).
// The packed copy depends on the kernel's register tile and K blocking, so a GEMM with a
// packed operand runs the kernel, and the K blocking, it was packed for. The blocking is
// the kernel's kc unless the packer asks for another (kc = k: one block, see
// GemmEpilogue::transposed_c).
class PackedMatrix {
 public:
  enum class Side { kA, kB };

  PackedMatrix() = default;
  // op(A)[rows=M, cols=K]: MR-row panels. `trans`: A is stored [K, M].
  static PackedMatrix pack_a(const GemmKernel& kernel, const float* a, int64_t lda, bool trans, int64_t m, int64_t k,
                             int64_t kc = 0);
  // op(B)[rows=K, cols=N]: NR-column panels. `trans`: B is stored [N, K].
  static PackedMatrix pack_b(const GemmKernel& kernel, const float* b, int64_t ldb, bool trans, int64_t k, int64_t n,
                             int64_t kc = 0);

  bool empty() const { return kernel_ == nullptr; }
  const GemmKernel& kernel() const { return *kernel_; }
  Side side() const { return side_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t kc() const { return kc_; }  // the K blocking it was packed with
  int64_t bytes() const { return buffer_.bytes(); }
  // The panels of k-block [k0, k0 + kb) from row (A) or column (B) `start` on, a
  // multiple of the tile.
  const float* panels(int64_t k0, int64_t kb, int64_t start) const { return base() + k0 * padded_ + start * kb; }

 private:
  float* base() const { return reinterpret_cast<float*>(buffer_.data()); }

  const GemmKernel* kernel_ = nullptr;
  Side side_ = Side::kA;
  int64_t rows_ = 0, cols_ = 0, kc_ = 0;
  int64_t padded_ = 0;  // M (side A) or N (side B) rounded up to the tile
  AlignedBuffer buffer_;
};

// One GEMM operand: plain row-major memory (optionally transposed), a PackedMatrix, or
// (B only) a packing function that produces op(B)'s panels from another layout, e.g. a
// convolution's im2col written straight into panels, with no [K, N] matrix in between.
struct GemmOperand {
  GemmOperand(const float* data, int64_t ld, bool trans = false) : data(data), ld(ld), trans(trans) {}
  GemmOperand(const PackedMatrix& packed) : packed(&packed) {}  // NOLINT: implicit on purpose
  explicit GemmOperand(const BPanelPacker& packer) : packer(&packer) {}

  const float* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
  const PackedMatrix* packed = nullptr;
  const BPanelPacker* packer = nullptr;
};

enum class GemmBias { kNone, kPerRow, kPerColumn };

// Applied to each tile of C after its last k-block, while it is still in cache:
// bias[i] (per row: a conv's output channel, folded BN's shift) or bias[j] (per column:
// a fully connected layer's output feature), the addend, then the activation.
struct GemmEpilogue {
  GemmBias bias_kind = GemmBias::kNone;
  const float* bias = nullptr;
  Activation activation;
  // C is stored transposed, [N, M] with row stride ldc: a pointwise convolution that
  // computes its few pixels as the rows of the product writes its NCHW output this way.
  // Each k-block after the first reads C back through a transpose: pack the constant
  // operand with kc = k so there is one (MobileNetV2's and RegNet's 7x7 layers 1.1x).
  bool transposed_c = false;
  // Added after the bias, before the activation: a matrix laid out as C (the same ldc,
  // transposed with it), e.g. the residual a convolution's output is summed with.
  const float* addend = nullptr;
};

// Which operands the caller passes packed (they need no scratch).
enum class GemmPacked { kNone, kA, kB, kBoth };

// Scratch bytes gemm() needs for these sizes with up to `threads` threads (packing the
// plain operands, per thread), with the K blocking of the packed operands (kc; 0: the
// kernel's). Take it from the op's workspace.
int64_t gemm_workspace_bytes(const GemmKernel& kernel, int64_t m, int64_t n, int64_t k, int threads, GemmPacked packed,
                             int64_t kc = 0);

// C = act(alpha * op(A) * op(B) + beta * C + bias). beta == 0 does not read C. Runs the
// kernel a packed operand was packed for (both packed: the same one), else `kernel`.
// Uses up to `threads` OpenMP threads (one inside a parallel region), as many as the
// workspace has room for; every element of C is computed by one thread in the same
// k order, so the result does not depend on the thread count.
void gemm(int64_t m, int64_t n, int64_t k, float alpha, const GemmOperand& a, const GemmOperand& b, float beta,
          float* c, int64_t ldc, const GemmEpilogue& epilogue, std::span<float> workspace, int threads,
          const GemmKernel& kernel);

}  // namespace minfer::kernels
