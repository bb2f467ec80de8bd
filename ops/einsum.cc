// Einsum (torch.einsum; ONNX opset 12) of one or two float32 operands: an explicit
// equation ("bhid,bhjd->bhij") or an implicit one (the output: the letters that appear
// once, in alphabetical order), "..." standing for leading axes that broadcast.
// Two operands run as a batched GEMM. Each letter of the output is a batch axis (in both
// operands), a row (the first only) or a column (the second only); the letters the output
// drops are contracted, a letter of one operand alone against the other repeated along
// it (its sum). Each operand is copied into [batch, rows, k] and [batch, k, columns]
// order (not where it already is), and the product back into the output's order (not
// where that is [batch, rows, columns]). One operand is a permutation, or a GEMM against
// ones where the output drops letters (their sums).
// Cost: two operands, the product of every letter's size in MACs (the batched GEMM's
// batch x rows x columns x k); one operand, one add per element summed.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "ops/kernels/gemm.h"
#include "ops/op_helpers.h"
#include "ops/strided_copy.h"

namespace minfer {
namespace {

constexpr int kEllipsis = 100;  // label of the ellipsis's first axis; letters are 0..51

struct Term {
  std::vector<int> labels;  // per letter its label; kEllipsis where "..." stands
  bool ellipsis = false;
};

int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

Term parse_term(const std::string& text, const std::string& equation) {
  Term t;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "...") == 0) {
      if (t.ellipsis) throw OpError(fmt::format("equation '{}': '...' twice in one term", equation));
      t.ellipsis = true;
      t.labels.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const int label = letter_label(text[i]);
    if (label < 0) throw OpError(fmt::format("equation '{}': '{}' is not a letter", equation, text[i]));
    if (std::count(t.labels.begin(), t.labels.end(), label))
      throw UnsupportedError(
          fmt::format("equation '{}': a letter repeated in one term (a diagonal) is not supported", equation));
    t.labels.push_back(label);
  }
  return t;
}

// The equation with every axis labelled: the ellipsis's axes, right-aligned across the
// operands, as kEllipsis + j; each label's size (an ellipsis axis of size 1 broadcasts).
struct Labelled {
  std::vector<std::vector<int>> inputs;  // per operand, per axis
  std::vector<int> output;
  std::map<int, int64_t> size;
};

class EinsumOp final : public Op {
 public:
  explicit EinsumOp(const Node& node) {
    node.attrs.check_known({"equation"});
    std::string eq;
    for (char c : node.attrs.get_string("equation", "")) {
      if (c != ' ') eq += c;
    }
    equation_ = eq;
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    for (size_t begin = 0;;) {
      const size_t comma = lhs.find(',', begin);
      inputs_.push_back(parse_term(lhs.substr(begin, comma - begin), equation_));
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    if (inputs_.size() > 2)
      throw UnsupportedError(
          fmt::format("equation '{}': {} operands (one or two are supported)", equation_, inputs_.size()));
    if (arrow != std::string::npos) {
      output_ = parse_term(eq.substr(arrow + 2), equation_);
    } else {  // implicit: the ellipsis first, then the letters that appear once, in order
      std::map<int, int> count;
      for (const Term& t : inputs_) {
        output_.ellipsis |= t.ellipsis;
        for (int l : t.labels) ++count[l];
      }
      if (output_.ellipsis) output_.labels.push_back(kEllipsis);
      for (const auto& [label, n] : count)
        if (n == 1 && label != kEllipsis) output_.labels.push_back(label);
    }
    for (int l : output_.labels) {
      const bool found = std::any_of(inputs_.begin(), inputs_.end(), [&](const Term& t) {
        return std::count(t.labels.begin(), t.labels.end(), l) > 0;
      });
      if (!found) throw OpError(fmt::format("equation '{}': an output letter is in no input", equation_));
    }
  }

  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    const Labelled e = labelled(in);
    Shape y;
    for (int l : e.output) y.push_back(e.size.at(l));
    return {{DType::kFloat32, y}};
  }

  OpCost cost(const OpSignature& sig) const override {
    const Labelled e = labelled(sig.inputs);
    if (e.inputs.size() == 1) {
      const int64_t summed = num_elements(sig.inputs[0].shape()) == num_elements(sig.outputs[0].shape())
                                 ? 0
                                 : num_elements(sig.inputs[0].shape());
      return op_cost(*this, sig, 0, CostExpr::of("elements summed", summed));
    }
    const Gemm g = gemm_of(e);
    const CostExpr macs = CostExpr::of("batch", g.batch) * CostExpr::of("rows", g.m) * CostExpr::of("columns", g.n) *
                          CostExpr::of("contracted", g.k);
    return op_cost(*this, sig, macs, product_flops(macs, Activation{}, num_elements(sig.outputs[0].shape())));
  }

  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext& ctx) const override;

 private:
  // The product two operands (or one against ones) run as: each role's labels in order
  // (batch, rows and columns in the output's, contracted in the operands'), and sizes.
  struct Gemm {
    std::vector<int> batch_labels, m_labels, n_labels, k_labels;
    int64_t batch = 1, m = 1, n = 1, k = 1;
  };

  Labelled labelled(std::span<const OpInput> in) const {
    check_input_count(in, inputs_.size(), inputs_.size());
    require_float(in);
    Labelled e;
    size_t ellipsis_axes = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t letters = inputs_[i].labels.size() - (inputs_[i].ellipsis ? 1 : 0);
      const size_t rank = in[i].shape().size();
      if (inputs_[i].ellipsis ? rank < letters : rank != letters)
        throw OpError(fmt::format("equation '{}': operand {} has {} axes, its term {}", equation_, i, rank,
                                  inputs_[i].ellipsis ? fmt::format("at least {}", letters) : std::to_string(letters)));
      if (inputs_[i].ellipsis) ellipsis_axes = std::max(ellipsis_axes, rank - letters);
    }
    const auto expand = [&](const Term& t, size_t axes) {
      std::vector<int> labels;
      for (int l : t.labels) {
        if (l != kEllipsis) {
          labels.push_back(l);
          continue;
        }
        for (size_t j = ellipsis_axes - axes; j < ellipsis_axes; ++j) labels.push_back(kEllipsis + static_cast<int>(j));
      }
      return labels;
    };
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t letters = inputs_[i].labels.size() - (inputs_[i].ellipsis ? 1 : 0);
      e.inputs.push_back(expand(inputs_[i], in[i].shape().size() - letters));
      for (size_t a = 0; a < e.inputs[i].size(); ++a) {
        const int l = e.inputs[i][a];
        const int64_t d = in[i].shape()[a];
        auto [it, added] = e.size.emplace(l, d);
        if (added || it->second == d) continue;
        if (l >= kEllipsis && (it->second == 1 || d == 1)) {  // broadcast
          it->second = std::max(it->second, d);
          continue;
        }
        throw OpError(fmt::format("equation '{}': axis {} of operand {} has size {}, another axis of its label {}",
                                  equation_, a, i, d, it->second));
      }
    }
    e.output = expand(output_, ellipsis_axes);
    return e;
  }

  static Gemm gemm_of(const Labelled& e) {
    Gemm g;
    const auto has = [](const std::vector<int>& labels, int l) {
      return std::find(labels.begin(), labels.end(), l) != labels.end();
    };
    const std::vector<int> none;
    const std::vector<int>& a = e.inputs[0];
    const std::vector<int>& b = e.inputs.size() > 1 ? e.inputs[1] : none;
    for (int l : e.output) {
      if (has(a, l) && has(b, l)) {
        g.batch_labels.push_back(l);
        g.batch *= e.size.at(l);
      } else if (has(a, l)) {
        g.m_labels.push_back(l);
        g.m *= e.size.at(l);
      } else {
        g.n_labels.push_back(l);
        g.n *= e.size.at(l);
      }
    }
    for (const std::vector<int>* labels : {&a, &b})
      for (int l : *labels)
        if (!has(e.output, l) && !has(g.k_labels, l)) {
          g.k_labels.push_back(l);
          g.k *= e.size.at(l);
        }
    return g;
  }

  std::string equation_;
  std::vector<Term> inputs_;
  Term output_;
};

// A copy of a tensor with `labels` on its axes into dense order over `order` (labels the
// tensor lacks, or has at size 1 where the label is larger, repeat it: stride 0).
struct Regroup {
  StridedCopy copy;
  int64_t floats = 0;
  bool identity = true;  // the tensor is already in that order: no copy
};

Regroup regroup(const std::vector<int>& labels, const Shape& shape, const std::vector<int>& order,
                const std::map<int, int64_t>& size) {
  const Shape strides = dense_strides(shape);
  Shape dims, src;
  for (int l : order) {
    dims.push_back(size.at(l));
    const auto at = std::find(labels.begin(), labels.end(), l);
    const auto axis = static_cast<size_t>(at - labels.begin());
    src.push_back(at == labels.end() || shape[axis] == 1 ? 0 : strides[axis]);
  }
  Regroup r;
  r.floats = num_elements(dims);
  const Shape dst = dense_strides(dims);
  for (size_t d = 0; d < dims.size(); ++d) r.identity = r.identity && (dims[d] == 1 || src[d] == dst[d]);
  r.identity = r.identity && r.floats == num_elements(shape);
  r.copy = StridedCopy(dims, src, dst, 4);
  return r;
}

std::vector<int> concat(std::initializer_list<const std::vector<int>*> parts) {
  std::vector<int> all;
  for (const std::vector<int>* p : parts) all.insert(all.end(), p->begin(), p->end());
  return all;
}

std::unique_ptr<Kernel> EinsumOp::bind(const OpSignature& sig, const BindContext& ctx) const {
  const Labelled e = labelled(sig.inputs);
  const Gemm g = gemm_of(e);
  const bool two = e.inputs.size() == 2;
  const std::map<int, int64_t>& size = e.size;
  // One operand with no letter dropped: a permutation.
  if (!two && g.k_labels.empty()) {
    Regroup r = regroup(e.inputs[0], sig.inputs[0].shape(), e.output, size);
    KernelFacts f;
    f.kernel = "strided_copy";
    f.details = {{"equation", equation_}};
    return make_kernel(std::move(f), [copy = std::move(r.copy)](const RunContext& run, std::span<const TensorView> in,
                                                                std::span<const TensorView> out, Workspace) {
      copy.run(in[0].f32(), out[0].f32(), 0, 0, run.num_threads);
    });
  }
  const std::vector<int> a_order = concat({&g.batch_labels, &g.m_labels, &g.k_labels});
  const std::vector<int> b_order = concat({&g.batch_labels, &g.k_labels, &g.n_labels});
  const std::vector<int> c_order = concat({&g.batch_labels, &g.m_labels, &g.n_labels});
  Regroup a = regroup(e.inputs[0], sig.inputs[0].shape(), a_order, size);
  Regroup b;  // one operand: a column of ones
  if (two) b = regroup(e.inputs[1], sig.inputs[1].shape(), b_order, size);
  // The product in [batch, rows, columns] order, then into the output's.
  Shape c_dims, c_to_out;
  const Shape out_strides = dense_strides(sig.outputs[0].shape());
  for (int l : c_order) {
    c_dims.push_back(size.at(l));
    c_to_out.push_back(
        out_strides[static_cast<size_t>(std::find(e.output.begin(), e.output.end(), l) - e.output.begin())]);
  }
  const bool c_identity = c_order == e.output;
  const StridedCopy c_copy(c_dims, dense_strides(c_dims), c_to_out, 4);
  const kernels::GemmKernel& kernel = kernels::gemm_kernel(ctx.isa);
  const int64_t a_floats = a.identity ? 0 : a.floats;
  const int64_t b_floats = two ? (b.identity ? 0 : b.floats) : g.k;
  const int64_t c_floats = c_identity ? 0 : g.batch * g.m * g.n;
  // Each part of the workspace starts on a whole cache line.
  const auto lines = [](int64_t floats) { return (floats + 15) / 16 * 16; };
  const int64_t gemm_at = lines(a_floats) + lines(b_floats) + lines(c_floats);
  KernelFacts f;
  f.kernel = "gemm";
  f.details = {
      {"equation", equation_}, {"gemm_kernel", kernel.name}, {"batch", g.batch}, {"m", g.m}, {"n", g.n}, {"k", g.k}};
  f.workspace_bytes =
      4 * gemm_at + kernels::gemm_workspace_bytes(kernel, g.m, g.n, g.k, ctx.num_threads, kernels::GemmPacked::kNone);
  return make_kernel(std::move(f), [a = std::move(a), b = std::move(b), c_copy, c_identity, two, g, a_floats, b_floats,
                                    gemm_at, &kernel](const RunContext& run, std::span<const TensorView> in,
                                                      std::span<const TensorView> out, Workspace workspace) {
    const std::span<float> ws = workspace.floats();
    require_workspace(ws, gemm_at, "Einsum");
    float* a_buf = ws.data();
    float* b_buf = a_buf + (a_floats + 15) / 16 * 16;
    float* c_buf = b_buf + (b_floats + 15) / 16 * 16;
    const float* x = in[0].f32();
    if (!a.identity) a.copy.run(x, a_buf, 0, 0, run.num_threads);
    const float* av = a.identity ? x : a_buf;
    const float* bv = b_buf;
    if (!two) {
      std::fill_n(b_buf, g.k, 1.0f);
    } else if (b.identity) {
      bv = in[1].f32();
    } else {
      b.copy.run(in[1].f32(), b_buf, 0, 0, run.num_threads);
    }
    float* cv = c_identity ? out[0].f32() : c_buf;
    for (int64_t i = 0; i < g.batch; ++i)
      kernels::gemm(g.m, g.n, g.k, 1.0f, kernels::GemmOperand(av + i * g.m * g.k, g.k),
                    kernels::GemmOperand(two ? bv + i * g.k * g.n : bv, g.n), 0.0f, cv + i * g.m * g.n, g.n, {},
                    ws.subspan(static_cast<size_t>(gemm_at)), run.num_threads, kernel);
    if (!c_identity) c_copy.run(c_buf, out[0].f32(), 0, 0, run.num_threads);
  });
}

}  // namespace

std::unique_ptr<Op> make_einsum(const Node& node) {
  return std::make_unique<EinsumOp>(node);
}

}  // namespace minfer
