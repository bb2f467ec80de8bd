// The Reduce family (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp) over any axes,
// given as the attribute or (ReduceSum at opset 13, all at opset 18) as a constant
// input, with keepdims and noop_with_empty_axes.
//
// One kernel shape serves all: the input's dims are merged into runs of kept and of
// reduced dims, and each reduced run is one pass over an outer x reduced x inner view,
// the last run first; every reduction here composes that way (a sum of sums, a maximum
// of maxima, a log-sum-exp of log-sum-exps). The element map (square, absolute value)
// belongs to the first pass, the finish (divide by the count, square root, log) to the
// last. FLOPs follow docs/cost-model.md: per input element 1 (Sum, Mean, Max, Min,
// Prod), 2 (SumSquare, L1, L2: map and add), 4 (LogSumExp: max, subtract, exp, add);
// per output element 1 more for L2's square root and LogSum's log, 2 for LogSumExp's
// log and add; Mean's division per output is absorbed, as GlobalAveragePool's, which
// ReduceMean over all spatial axes of N x C x ... is (its kind says so).
//
// ReduceSum, ReduceProd, ReduceMax and ReduceMin also take int64 data, summed exactly.
//
// ArgMax and ArgMin give the int64 index of the extreme along one axis (the first, or
// with select_last_index the last, of equal ones; a NaN counts as the extreme): 1 FLOP
// (a compare) per input element.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/kernels/plane_means.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

enum class Combine { kAdd, kMax, kMin, kMul, kLogSumExp };
enum class Map { kNone, kSquare, kAbs };
enum class Finish { kNone, kMean, kSqrt, kLog };

struct ReduceFn {
  const char* op_type;
  Combine combine;
  Map map;
  Finish finish;
  int64_t flops_per_input, flops_per_output;
};

constexpr ReduceFn kReduceOps[] = {
    {"ReduceSum", Combine::kAdd, Map::kNone, Finish::kNone, 1, 0},
    {"ReduceMean", Combine::kAdd, Map::kNone, Finish::kMean, 1, 0},
    {"ReduceMax", Combine::kMax, Map::kNone, Finish::kNone, 1, 0},
    {"ReduceMin", Combine::kMin, Map::kNone, Finish::kNone, 1, 0},
    {"ReduceProd", Combine::kMul, Map::kNone, Finish::kNone, 1, 0},
    {"ReduceSumSquare", Combine::kAdd, Map::kSquare, Finish::kNone, 2, 0},
    {"ReduceL1", Combine::kAdd, Map::kAbs, Finish::kNone, 2, 0},
    {"ReduceL2", Combine::kAdd, Map::kSquare, Finish::kSqrt, 2, 1},
    {"ReduceLogSum", Combine::kAdd, Map::kNone, Finish::kLog, 1, 1},
    {"ReduceLogSumExp", Combine::kLogSumExp, Map::kNone, Finish::kNone, 4, 2},
};

const ReduceFn& find_reduce(const std::string& op_type) {
  for (const ReduceFn& r : kReduceOps)
    if (op_type == r.op_type) return r;
  throw UnsupportedError(fmt::format("op type '{}' is not a reduction", op_type));
}

// One pass: y[o, i] = reduce over j of x[o, j, i].
struct ReducePass {
  int64_t outer = 1, reduced = 1, inner = 1;
};

float initial(Combine c) {
  switch (c) {
    case Combine::kMax:
    case Combine::kLogSumExp: return -std::numeric_limits<float>::infinity();
    case Combine::kMin: return std::numeric_limits<float>::infinity();
    case Combine::kMul: return 1.0f;
    default: return 0.0f;
  }
}

float map_value(Map m, float v) {
  return m == Map::kSquare ? v * v : m == Map::kAbs ? std::fabs(v) : v;
}

float combine(Combine c, float acc, float v) {
  switch (c) {
    case Combine::kMax: return nan_max(acc, v);
    case Combine::kMin: return nan_min(acc, v);
    case Combine::kMul: return acc * v;
    default: return acc + v;
  }
}

// int64 data (PyTorch's shape arithmetic; any() and all() export as sums of a cast):
// Sum, Prod, Max and Min, exact, wrapping past 2^63 as two's complement does.
int64_t int_initial(Combine c) {
  switch (c) {
    case Combine::kMax: return std::numeric_limits<int64_t>::min();
    case Combine::kMin: return std::numeric_limits<int64_t>::max();
    case Combine::kMul: return 1;
    default: return 0;
  }
}

int64_t int_combine(Combine c, int64_t acc, int64_t v) {
  const auto wrap = [](uint64_t r) { return static_cast<int64_t>(r); };
  switch (c) {
    case Combine::kMax: return std::max(acc, v);
    case Combine::kMin: return std::min(acc, v);
    case Combine::kMul: return wrap(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
    default: return wrap(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
  }
}

// log(sum_j e^x[j * stride]) with the maximum taken out first, so it neither overflows
// nor underflows; -inf for no elements.
float log_sum_exp(const float* x, int64_t n, int64_t stride) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j) m = std::max(m, x[j * stride]);
  if (std::isinf(m)) return m;  // no elements, all -inf, or a +inf
  float sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) sum += std::exp(x[j * stride] - m);
  return m + std::log(sum);
}

// A contiguous run of n elements reduced to one: 16 partial results, so the loop
// vectorises without reassociating a single accumulator.
template <Combine C, Map M>
float reduce_run(const float* x, int64_t n) {
  constexpr int64_t kLanes = 16;
  float acc[kLanes];
  std::fill(acc, acc + kLanes, initial(C));
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t k = 0; k < kLanes; ++k) acc[k] = combine(C, acc[k], map_value(M, x[j + k]));
  float r = initial(C);
  for (; j < n; ++j) r = combine(C, r, map_value(M, x[j]));
  for (int64_t k = 0; k < kLanes; ++k) r = combine(C, r, acc[k]);
  return r;
}

template <Combine C, Map M>
void run_pass_as(const ReducePass& p, const float* x, float* y) {
  for (int64_t o = 0; o < p.outer; ++o) {
    const float* src = x + o * p.reduced * p.inner;
    float* dst = y + o * p.inner;
    if (p.inner == 1) {
      dst[0] = reduce_run<C, M>(src, p.reduced);
      continue;
    }
    // Row by row into the output: each step is a vectorisable loop over the inner dims.
    std::fill(dst, dst + p.inner, initial(C));
    for (int64_t j = 0; j < p.reduced; ++j) {
      const float* row = src + j * p.inner;
      for (int64_t i = 0; i < p.inner; ++i) dst[i] = combine(C, dst[i], map_value(M, row[i]));
    }
  }
}

template <Combine C>
void run_pass_combine(const ReducePass& p, Map m, const float* x, float* y) {
  switch (m) {
    case Map::kSquare: return run_pass_as<C, Map::kSquare>(p, x, y);
    case Map::kAbs: return run_pass_as<C, Map::kAbs>(p, x, y);
    default: return run_pass_as<C, Map::kNone>(p, x, y);
  }
}

void run_pass(const ReducePass& p, Combine c, Map m, const float* x, float* y) {
  switch (c) {
    case Combine::kMax: return run_pass_combine<Combine::kMax>(p, m, x, y);
    case Combine::kMin: return run_pass_combine<Combine::kMin>(p, m, x, y);
    case Combine::kMul: return run_pass_combine<Combine::kMul>(p, m, x, y);
    case Combine::kAdd: return run_pass_combine<Combine::kAdd>(p, m, x, y);
    case Combine::kLogSumExp:
      for (int64_t o = 0; o < p.outer; ++o)
        for (int64_t i = 0; i < p.inner; ++i)
          y[o * p.inner + i] = log_sum_exp(x + o * p.reduced * p.inner + i, p.reduced, p.inner);
      return;
  }
}

// The passes for reducing `reduced` dims of `shape`, the last run of them first. With
// nothing to reduce (only unit dims, or noop_with_empty_axes) one pass over every
// element still applies the map and the finish (ReduceL1 of one element is |x|).
std::vector<ReducePass> plan_passes(const Shape& shape, const std::vector<bool>& reduced) {
  std::vector<ReducePass> passes;
  Shape dims = shape;
  for (size_t end = dims.size(); end-- > 0;) {
    if (!reduced[end] || dims[end] == 1) continue;
    size_t begin = end;
    while (begin > 0 && (reduced[begin - 1] || dims[begin - 1] == 1)) --begin;
    ReducePass p;
    for (size_t d = 0; d < begin; ++d) p.outer *= dims[d];
    for (size_t d = begin; d <= end; ++d) p.reduced *= dims[d], dims[d] = 1;
    for (size_t d = end + 1; d < dims.size(); ++d) p.inner *= dims[d];
    passes.push_back(p);
    end = begin;
    if (end == 0) break;
  }
  if (passes.empty()) passes.push_back({num_elements(shape), 1, 1});
  return passes;
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(KernelFacts facts, const ReduceFn& fn, std::vector<ReducePass> passes, int64_t count, bool int64)
      : Kernel(std::move(facts)), fn_(fn), passes_(std::move(passes)), count_(count), int64_(int64) {
    int64_t scratch = 0;
    for (size_t k = 0; k + 1 < passes_.size(); ++k) scratch += passes_[k].outer * passes_[k].inner;
    mutable_facts().workspace_bytes = scratch * (int64 ? 8 : 4);
  }

  void run(const RunContext&, std::span<const TensorView> in, std::span<const TensorView> out,
           Workspace workspace) const override {
    workspace.require(facts().workspace_bytes, "Reduce");
    if (int64_) return run_int64(in[0].as<int64_t>(), out[0].as<int64_t>(), workspace);
    const float* x = in[0].f32();
    float* scratch = workspace.floats().data();
    for (size_t k = 0; k < passes_.size(); ++k) {
      const bool last = k + 1 == passes_.size();
      float* y = last ? out[0].f32() : scratch;
      run_pass(passes_[k], fn_.combine, k == 0 ? fn_.map : Map::kNone, x, y);
      x = y;
      scratch += passes_[k].outer * passes_[k].inner;
    }
    float* y = out[0].f32();
    const int64_t n = out[0].size();
    switch (fn_.finish) {
      case Finish::kMean: {
        const float scale = 1.0f / static_cast<float>(count_);
        for (int64_t i = 0; i < n; ++i) y[i] *= scale;
        break;
      }
      case Finish::kSqrt:
        for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(y[i]);
        break;
      case Finish::kLog:
        for (int64_t i = 0; i < n; ++i) y[i] = std::log(y[i]);
        break;
      case Finish::kNone: break;
    }
  }

 private:
  // The passes on int64 data: Sum, Prod, Max and Min (no map, no finish).
  void run_int64(const int64_t* x, int64_t* out, Workspace workspace) const {
    auto* scratch = reinterpret_cast<int64_t*>(workspace.floats().data());
    for (size_t k = 0; k < passes_.size(); ++k) {
      const ReducePass& p = passes_[k];
      int64_t* y = k + 1 == passes_.size() ? out : scratch;
      for (int64_t o = 0; o < p.outer; ++o)
        for (int64_t i = 0; i < p.inner; ++i) {
          int64_t acc = int_initial(fn_.combine);
          for (int64_t j = 0; j < p.reduced; ++j)
            acc = int_combine(fn_.combine, acc, x[(o * p.reduced + j) * p.inner + i]);
          y[o * p.inner + i] = acc;
        }
      x = y;
      scratch += p.outer * p.inner;
    }
  }

  const ReduceFn fn_;
  const std::vector<ReducePass> passes_;
  const int64_t count_;  // input elements per output element
  const bool int64_;
};

class ReduceOp final : public Op {
 public:
  explicit ReduceOp(const Node& node) : fn_(find_reduce(node.op_type)) {
    node.attrs.check_known({"axes", "keepdims", "noop_with_empty_axes"});
    axes_ = node.attrs.get_ints("axes");
    keepdims_ = node.attrs.get_int("keepdims", 1) != 0;
    noop_with_empty_axes_ = node.attrs.get_int("noop_with_empty_axes", 0) != 0;
  }

  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = 1u << 1;  // axes
    return t;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const std::vector<bool> reduced = reduced_dims(in);
    const Shape& x = in[0].shape();
    Shape y;
    for (size_t d = 0; d < x.size(); ++d) {
      if (!reduced[d])
        y.push_back(x[d]);
      else if (keepdims_)
        y.push_back(1);
    }
    return {{in[0].dtype(), y}};
  }

  OpCost cost(const OpSignature& sig) const override {
    CostExpr flops = CostExpr::of("FLOPs/input element", fn_.flops_per_input) *
                     CostExpr::of("input elements", num_elements(sig.inputs[0].shape()));
    if (fn_.flops_per_output)
      flops = flops + CostExpr::of("FLOPs/output element", fn_.flops_per_output) *
                          CostExpr::of("output elements", num_elements(sig.outputs[0].shape()));
    return op_cost(*this, sig, 0, flops);
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override {
    const std::vector<bool> reduced = reduced_dims(sig.inputs);
    const Shape& x = sig.inputs[0].shape();
    const int64_t outputs = num_elements(sig.outputs[0].shape());
    KernelFacts facts;
    const bool int64 = sig.inputs[0].dtype() == DType::kInt64;
    if (!int64 && global_pool(x, reduced))
      facts.op_class = fn_.combine == Combine::kMax ? "global_max_pool" : "global_average_pool";
    if (facts.op_class == "global_average_pool" && outputs > 0) {
      // GlobalAveragePool's kernel: SIMD sums in double, threads over the planes.
      const int64_t n = num_elements(x) / outputs;
      return make_kernel(std::move(facts), [outputs, n, ctx](const RunContext&, std::span<const TensorView> in,
                                                             std::span<const TensorView> out, Workspace) {
        kernels::plane_means(ctx.isa, in[0].f32(), outputs, n, out[0].f32(), ctx.num_threads);
      });
    }
    return std::make_unique<ReduceKernel>(std::move(facts), fn_, plan_passes(x, reduced),
                                          outputs == 0 ? 0 : num_elements(x) / outputs, int64);
  }

 private:
  // Which dims of input 0 are reduced: the axes given, else all, else (noop) none.
  std::vector<bool> reduced_dims(std::span<const OpInput> in) const {
    check_input_count(in, 1, 2);
    const bool exact = fn_.map == Map::kNone && fn_.finish == Finish::kNone && fn_.combine != Combine::kLogSumExp;
    if (!(exact && in[0].dtype() == DType::kInt64)) require_float(in.first(1));
    const int64_t rank = static_cast<int64_t>(in[0].shape().size());
    std::vector<int64_t> axes = axes_;
    if (in.size() > 1 && in[1].present) {
      if (!in[1].constant) throw UnsupportedError("axes computed at run time are not supported");
      axes = constant_ints(in, 1, "axes");
    }
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !noop_with_empty_axes_);
    for (int64_t a : axes) {
      const size_t d = static_cast<size_t>(normalize_axis(a, rank, "axes"));
      if (reduced[d]) throw OpError(fmt::format("axis {} is given twice", a));
      reduced[d] = true;
    }
    return reduced;
  }

  // ReduceMean or ReduceMax over exactly the spatial dims of N x C x ...: a global pool.
  bool global_pool(const Shape& x, const std::vector<bool>& reduced) const {
    if (fn_.finish != Finish::kMean && fn_.combine != Combine::kMax) return false;
    if (fn_.map != Map::kNone || x.size() < 3 || reduced[0] || reduced[1]) return false;
    return std::all_of(reduced.begin() + 2, reduced.end(), [](bool r) { return r; });
  }

  ReduceFn fn_;
  std::vector<int64_t> axes_;
  bool keepdims_ = true;
  bool noop_with_empty_axes_ = false;
};

class ArgReduceOp final : public Op {
 public:
  explicit ArgReduceOp(const Node& node) : max_(node.op_type == "ArgMax") {
    node.attrs.check_known({"axis", "keepdims", "select_last_index"});
    axis_ = node.attrs.get_int("axis", 0);
    keepdims_ = node.attrs.get_int("keepdims", 1) != 0;
    last_ = node.attrs.get_int("select_last_index", 0) != 0;
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 1);
    require_float(in);
    const Shape& x = in[0].shape();
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.size())));
    if (x[axis] == 0) throw OpError(fmt::format("axis {} of {} is empty: no index to give", axis_, shape_str(x)));
    Shape y = x;
    if (keepdims_)
      y[axis] = 1;
    else
      y.erase(y.begin() + static_cast<std::ptrdiff_t>(axis));
    return {{DType::kInt64, y}};
  }

  OpCost cost(const OpSignature& sig) const override {
    return op_cost(*this, sig, 0, CostExpr::of("input elements", num_elements(sig.inputs[0].shape())));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Shape& x = sig.inputs[0].shape();
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.size())));
    ReducePass p;
    for (size_t d = 0; d < x.size(); ++d) (d < axis ? p.outer : d == axis ? p.reduced : p.inner) *= x[d];
    return make_kernel({}, [p, max = max_, last = last_](const RunContext&, std::span<const TensorView> in,
                                                         std::span<const TensorView> out, Workspace) {
      for (int64_t o = 0; o < p.outer; ++o)
        for (int64_t i = 0; i < p.inner; ++i) {
          const float* v = in[0].f32() + o * p.reduced * p.inner + i;
          int64_t best = 0;
          for (int64_t j = 1; j < p.reduced && !std::isnan(v[best * p.inner]); ++j) {
            const float a = v[j * p.inner], b = v[best * p.inner];
            const bool better = std::isnan(a) || (max ? a > b : a < b) || (last && a == b);
            if (better) best = j;
          }
          out[0].as<int64_t>()[o * p.inner + i] = best;
        }
    });
  }

 private:
  bool max_;
  int64_t axis_ = 0;
  bool keepdims_ = true, last_ = false;
};

}  // namespace

std::unique_ptr<Op> make_reduce(const Node& node) {
  return std::make_unique<ReduceOp>(node);
}
std::unique_ptr<Op> make_arg_reduce(const Node& node) {
  return std::make_unique<ArgReduceOp>(node);
}

}  // namespace minfer
