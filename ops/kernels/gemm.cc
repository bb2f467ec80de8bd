// The GEMM driver: kernel dispatch, the GotoBLAS loop nest around the macro-kernels,
// packing of plain operands into the workspace, and the split of C among threads.
#include "ops/kernels/gemm.h"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "ops/kernels/gemm_pack.h"
#include "ops/kernels/threads.h"
#include "ops/kernels/transpose.h"

namespace minfer::kernels {
namespace {

int64_t round_up(int64_t x, int64_t r) {
  return (x + r - 1) / r * r;
}
int64_t ceil_div(int64_t x, int64_t r) {
  return (x + r - 1) / r;
}

// Packing a float costs about as much time as this many multiply-adds in the kernel.
constexpr int64_t kPackCostInMacs = 8;

// Floats of scratch one thread needs for its plain operands.
struct ThreadScratch {
  int64_t a_floats = 0, b_floats = 0;
  int64_t floats() const { return a_floats + b_floats; }
};

ThreadScratch scratch_per_thread(const GemmKernel& kernel, int64_t m, int64_t n, int64_t k, int64_t kc, bool a_packed,
                                 bool b_packed) {
  const int64_t kb = KBlocks(k, kc).size;
  constexpr int64_t kAlignSlack = 16;  // floats: room to align each buffer to 64 bytes
  ThreadScratch s;
  if (!a_packed) s.a_floats = round_up(std::min(kernel.mc, m), kernel.mr) * kb + kAlignSlack;
  if (!b_packed) s.b_floats = kb * round_up(std::min(kernel.nc, n), kernel.nr) + kAlignSlack;
  return s;
}

float* align64(float* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<float*>((addr + 63) / 64 * 64);
}

// C split into parts_m x parts_n rectangles on tile boundaries, one per thread, so each
// element is computed by exactly one thread and edge tiles stay where they are.
struct Partition {
  int parts_m = 1, parts_n = 1;
  int threads() const { return parts_m * parts_n; }
};

// The tile range [begin, end) of part `p` of `parts` over `tiles` tiles.
int64_t part_begin(int64_t tiles, int parts, int p) {
  return tiles * p / parts;
}

Partition choose_partition(const GemmKernel& kernel, int64_t m, int64_t n, int64_t k, int threads, bool a_packed,
                           bool b_packed) {
  const int64_t m_tiles = ceil_div(m, kernel.mr), n_tiles = ceil_div(n, kernel.nr);
  const int max_threads =
      threads_worth_starting(m * n * std::max<int64_t>(k, 1), m_tiles * n_tiles, threads, Work::kDense);
  Partition best;
  int64_t best_cost = std::numeric_limits<int64_t>::max();
  for (int t = 1; t <= max_threads; ++t) {
    for (int pm = 1; pm <= t; ++pm) {
      if (t % pm != 0) continue;
      const int pn = t / pm;
      if (pm > m_tiles || pn > n_tiles) continue;
      // The largest part's time: its padded multiply-adds plus its packing.
      const int64_t rows = ceil_div(m_tiles, pm) * kernel.mr, cols = ceil_div(n_tiles, pn) * kernel.nr;
      int64_t cost = rows * cols * k;
      if (!a_packed) cost += kPackCostInMacs * rows * k * ceil_div(cols, kernel.nc);
      if (!b_packed) cost += kPackCostInMacs * cols * k;
      if (cost < best_cost) {
        best_cost = cost;
        best = {pm, pn};
      }
    }
  }
  return best;
}

struct GemmProblem {
  const GemmKernel& kernel;
  int64_t m, n, k, kc;
  float alpha;
  const GemmOperand& a;
  const GemmOperand& b;
  float beta;
  float* c;
  int64_t ldc;
  const GemmEpilogue& epilogue;
  const BPanelPacker* b_packer;  // unless B is a PackedMatrix
};

void pack_plain_b(const void* source, int64_t k0, int64_t kb, int64_t j0, int64_t cols, int nr, float* dst) {
  const auto& b = *static_cast<const GemmOperand*>(source);
  pack_b_block(b.data, b.ld, b.trans, k0, kb, j0, cols, nr, dst);
}

// The sequential GotoBLAS loops over rows [m0, m1) and columns [n0, n1) of C.
void run_part(const GemmProblem& pr, int64_t m0, int64_t m1, int64_t n0, int64_t n1, float* a_buf, float* b_buf) {
  const GemmKernel& kn = pr.kernel;
  const KBlocks blocks(pr.k, pr.kc);
  for (int64_t jc = n0; jc < n1; jc += kn.nc) {
    const int64_t nc = std::min(kn.nc, n1 - jc);
    for (int64_t kbi = 0; kbi < blocks.count; ++kbi) {
      const int64_t k0 = blocks.begin(kbi), kb = blocks.length(kbi);
      const float* b_panels = pr.b.packed ? pr.b.packed->panels(k0, kb, jc) : b_buf;
      for (int64_t ic = m0; ic < m1; ic += kn.mc) {
        const int64_t mc = std::min(kn.mc, m1 - ic);
        const float* a_panels = a_buf;
        if (pr.a.packed)
          a_panels = pr.a.packed->panels(k0, kb, ic);
        else
          pack_a_block(pr.a.data, pr.a.ld, pr.a.trans, ic, mc, k0, kb, kn.mr, a_buf, false);
        GemmBlock blk;
        blk.m = mc;
        blk.n = nc;
        blk.k = kb;
        blk.a = a_panels;
        blk.b = b_panels;
        if (!pr.b.packed && ic == m0) {  // B's panels are packed by the first row block's pass
          blk.pack_b = pr.b_packer;
          blk.b_buffer = b_buf;
          blk.b_k0 = k0;
          blk.b_j0 = jc;
          if (!pr.b.packer && !pr.b.trans) {
            blk.b_source = pr.b.data + k0 * pr.b.ld + jc;
            blk.b_ld = pr.b.ld;
          }
        }
        blk.c_trans = pr.epilogue.transposed_c;
        const int64_t at = blk.c_trans ? jc * pr.ldc + ic : ic * pr.ldc + jc;
        blk.c = pr.c + at;
        if (pr.epilogue.addend) blk.addend = pr.epilogue.addend + at;
        blk.ldc = pr.ldc;
        blk.alpha = pr.alpha;
        blk.beta = kbi == 0 ? pr.beta : 1.0f;
        blk.last = kbi + 1 == blocks.count;
        if (pr.epilogue.bias_kind == GemmBias::kPerRow) blk.row_bias = pr.epilogue.bias + ic;
        if (pr.epilogue.bias_kind == GemmBias::kPerColumn) blk.col_bias = pr.epilogue.bias + jc;
        blk.activation = &pr.epilogue.activation;
        kn.run_block(blk);
      }
    }
  }
}

// K == 0: no products, C = act(beta * C + bias).
void scale_only(int64_t m, int64_t n, float beta, float* c, int64_t ldc, const GemmEpilogue& ep) {
  const int64_t row_step = ep.transposed_c ? 1 : ldc, col_step = ep.transposed_c ? ldc : 1;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float& cij = c[i * row_step + j * col_step];
      float x = beta == 0.0f ? 0.0f : beta * cij;
      if (ep.bias_kind == GemmBias::kPerRow) x += ep.bias[i];
      if (ep.bias_kind == GemmBias::kPerColumn) x += ep.bias[j];
      if (ep.addend) x += ep.addend[&cij - c];
      cij = x;
    }
  }
  const int64_t lines = ep.transposed_c ? n : m, length = ep.transposed_c ? m : n;
  for (int64_t l = 0; l < lines; ++l) ep.activation.apply(c + l * ldc, length);
}

// The K blocking of the call: the packed operands', else the kernel's.
int64_t k_blocking(const GemmOperand& a, const GemmOperand& b, const GemmKernel& kernel) {
  if (a.packed && b.packed && a.packed->kc() != b.packed->kc())
    throw std::invalid_argument("gemm: A and B were packed with different K blockings");
  if (a.packed) return a.packed->kc();
  if (b.packed) return b.packed->kc();
  return kernel.kc;
}

// The kernel to run, after checking that packed operands fit the call.
const GemmKernel& kernel_of(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b,
                            const GemmKernel& fallback) {
  if (a.packed && (a.packed->side() != PackedMatrix::Side::kA || a.packed->rows() != m || a.packed->cols() != k))
    throw std::invalid_argument("gemm: packed A is not an [M, K] A operand");
  if (b.packed && (b.packed->side() != PackedMatrix::Side::kB || b.packed->rows() != k || b.packed->cols() != n))
    throw std::invalid_argument("gemm: packed B is not a [K, N] B operand");
  if (a.packed && b.packed && &a.packed->kernel() != &b.packed->kernel())
    throw std::invalid_argument("gemm: A and B were packed for different kernels");
  if (a.packer) throw std::invalid_argument("gemm: a packing function can only produce B");
  if (a.packed) return a.packed->kernel();
  if (b.packed) return b.packed->kernel();
  return fallback;
}

}  // namespace

const GemmKernel& active_gemm_kernel() {
  return *gemm_kernel_for(active_isa());
}

const GemmKernel* gemm_kernel_for(Isa isa) {
  if (!isa_runnable(isa)) return nullptr;
  return per_isa<const GemmKernel*>(isa, &gemm_f32_4x8_scalar, &gemm_f32_6x16_avx2, &gemm_f32_12x32_avx512);
}

const GemmKernel& gemm_kernel(Isa isa) {
  const GemmKernel* k = gemm_kernel_for(isa);
  if (!k) throw std::invalid_argument(std::string("gemm: this CPU cannot run ") + isa_name(isa));
  return *k;
}

void finish_tile_scalar(const GemmBlock& blk, const float* acc, int64_t acc_ld, int64_t i, int64_t j, int rows,
                        int nr) {
  // A transposed C (and addend) is read and written through a row-major copy of the tile.
  float tile[kMaxTileFloats], addend_tile[kMaxTileFloats];
  const float* addend = blk.last ? blk.addend : nullptr;
  if (blk.c_trans && blk.beta != 0.0f) transpose(blk.c + j * blk.ldc + i, blk.ldc, nr, rows, tile, nr);
  if (blk.c_trans && addend) {
    transpose(addend + j * blk.ldc + i, blk.ldc, nr, rows, addend_tile, nr);
    addend = addend_tile;
  }
  const int64_t addend_ld = blk.c_trans ? nr : blk.ldc, addend_at = blk.c_trans ? 0 : i * blk.ldc + j;
  for (int r = 0; r < rows; ++r) {
    float* c = blk.c_trans ? tile + r * nr : blk.c + (i + r) * blk.ldc + j;
    const float* t = acc + r * acc_ld;
    const float* add = addend ? addend + addend_at + r * addend_ld : nullptr;
    for (int q = 0; q < nr; ++q) {
      float x = blk.alpha * t[q];
      if (blk.beta != 0.0f) x += blk.beta * c[q];
      if (blk.last) {
        if (blk.row_bias) x += blk.row_bias[i + r];
        if (blk.col_bias) x += blk.col_bias[j + q];
        if (add) x += add[q];
      }
      c[q] = x;
    }
    if (blk.last && blk.activation) blk.activation->apply(c, nr);
  }
  if (blk.c_trans) transpose(tile, nr, rows, nr, blk.c + j * blk.ldc + i, blk.ldc);
}

int64_t gemm_workspace_bytes(const GemmKernel& kernel, int64_t m, int64_t n, int64_t k, int threads, GemmPacked packed,
                             int64_t kc) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const bool a_packed = packed == GemmPacked::kA || packed == GemmPacked::kBoth;
  const bool b_packed = packed == GemmPacked::kB || packed == GemmPacked::kBoth;
  const ThreadScratch s = scratch_per_thread(kernel, m, n, k, kc > 0 ? kc : kernel.kc, a_packed, b_packed);
  const int used = choose_partition(kernel, m, n, k, std::max(threads, 1), a_packed, b_packed).threads();
  return 4 * s.floats() * used;
}

void gemm(int64_t m, int64_t n, int64_t k, float alpha, const GemmOperand& a, const GemmOperand& b, float beta,
          float* c, int64_t ldc, const GemmEpilogue& epilogue, std::span<float> workspace, int threads,
          const GemmKernel& kernel) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) return scale_only(m, n, beta, c, ldc, epilogue);
  const GemmKernel& kn = kernel_of(m, n, k, a, b, kernel);
  const bool a_packed = a.packed != nullptr, b_packed = b.packed != nullptr;
  const int64_t kc = k_blocking(a, b, kn);
  const ThreadScratch s = scratch_per_thread(kn, m, n, k, kc, a_packed, b_packed);
  // Never more threads than the workspace was planned for, and one inside a parallel region.
  int max_threads = omp_in_parallel() ? 1 : std::max(threads, 1);
  if (s.floats() > 0) max_threads = std::min<int64_t>(max_threads, static_cast<int64_t>(workspace.size()) / s.floats());
  if (max_threads < 1) throw std::invalid_argument("gemm: workspace smaller than gemm_workspace_bytes()");
  const Partition part = choose_partition(kn, m, n, k, max_threads, a_packed, b_packed);
  const BPanelPacker plain_b{&pack_plain_b, &b};
  const GemmProblem pr{kn, m, n, k, kc, alpha, a, b, beta, c, ldc, epilogue, b.packer ? b.packer : &plain_b};
  const int64_t m_tiles = ceil_div(m, kn.mr), n_tiles = ceil_div(n, kn.nr);

  auto run_thread_part = [&](int t) {
    const int pm = t / part.parts_n, pn = t % part.parts_n;
    const int64_t m0 = part_begin(m_tiles, part.parts_m, pm) * kn.mr;
    const int64_t m1 = std::min(m, part_begin(m_tiles, part.parts_m, pm + 1) * kn.mr);
    const int64_t n0 = part_begin(n_tiles, part.parts_n, pn) * kn.nr;
    const int64_t n1 = std::min(n, part_begin(n_tiles, part.parts_n, pn + 1) * kn.nr);
    float* scratch = workspace.data() + t * s.floats();
    run_part(pr, m0, m1, n0, n1, align64(scratch), align64(scratch + s.a_floats));
  };
  const int parts = part.threads();
  if (parts == 1) return run_thread_part(0);
    // The runtime may grant fewer threads than asked; the loop still covers every part.
#pragma omp parallel num_threads(parts)
  for (int t = omp_get_thread_num(); t < parts; t += omp_get_num_threads()) run_thread_part(t);
}

}  // namespace minfer::kernels
