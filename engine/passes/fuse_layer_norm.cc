#include "engine/passes/fuse_layer_norm.h"

#include <algorithm>

#include "engine/passes/replace_pattern.h"
#include "engine/passes/tensor_uses.h"

namespace minfer {
namespace {

// The first of the trailing axes a ReduceMean with keepdims reduces over its input of
// rank `rank`, or nullopt when it reduces anything else.
std::optional<int64_t> trailing_axes_start(const CompileGraph& g, size_t node, int64_t rank) {
  const Node& n = g.node(node);
  if (n.attrs.get_int("keepdims", 1) != 1 || n.attrs.get_int("noop_with_empty_axes", 0) != 0) return std::nullopt;
  std::vector<int64_t> axes = n.attrs.get_ints("axes");
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    const Tensor* t = g.constant(n.inputs[1]);
    if (!t || t->dtype() != DType::kInt64) return std::nullopt;
    axes.assign(t->values<int64_t>().begin(), t->values<int64_t>().end());
  }
  if (axes.empty()) return std::nullopt;
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  const int64_t start = rank - static_cast<int64_t>(axes.size());
  for (size_t k = 0; k < axes.size(); ++k)
    if (axes[k] != start + static_cast<int64_t>(k)) return std::nullopt;
  return start;
}

// A constant with the normalised shape x[axis:] (leading unit dims allowed).
bool is_row_constant(const CompileGraph& g, const std::string& tensor, const Shape& x, int64_t axis) {
  const Tensor* t = g.constant(tensor);
  if (!t || t->dtype() != DType::kFloat32) return false;
  Shape s = t->shape();
  const Shape row(x.begin() + axis, x.end());
  while (s.size() > row.size() && s.front() == 1) s.erase(s.begin());
  return s == row;
}

struct Match {
  std::vector<size_t> nodes;  // in graph order; the last becomes the LayerNormalization
  std::string x, gamma, beta;
  int64_t axis = 0;
  float epsilon = 0.0f;
};

// The pattern ending in the Div node `div`, if it is one.
std::optional<Match> match_at(const CompileGraph& g, const TensorUses& uses, size_t div) {
  const Node& dn = g.node(div);
  if (dn.inputs.size() != 2) return std::nullopt;
  const std::string& centred = dn.inputs[0];
  const auto sub = uses.producer_of_type(g, centred, "Sub");
  const auto sqrt = uses.producer_of_type(g, dn.inputs[1], "Sqrt");
  if (!sub || !sqrt || !uses.read_once(g, dn.inputs[1])) return std::nullopt;
  // The centred x feeds the Pow and this Div, nothing else.
  auto reads = uses.reads.find(centred);
  if (reads == uses.reads.end() || reads->second != 2 || g.is_graph_output(centred)) return std::nullopt;
  Match m;
  m.x = g.node(*sub).inputs[0];
  const auto mean = uses.producer_of_type(g, g.node(*sub).inputs[1], "ReduceMean");
  if (!mean || g.node(*mean).inputs[0] != m.x || !uses.read_once(g, g.node(*sub).inputs[1])) return std::nullopt;
  const Shape& xs = g.type(m.x).shape;
  const auto axis = trailing_axes_start(g, *mean, static_cast<int64_t>(xs.size()));
  if (!axis) return std::nullopt;
  m.axis = *axis;
  // Sqrt(ReduceMean(Pow(centred, 2)) + eps)
  const std::string& sum_in = g.node(*sqrt).inputs[0];
  const auto add_eps = uses.producer_of_type(g, sum_in, "Add");
  if (!add_eps || !uses.read_once(g, sum_in)) return std::nullopt;
  const Node& an = g.node(*add_eps);
  if (an.inputs.size() != 2) return std::nullopt;
  const int side = scalar_constant(g, an.inputs[1]) ? 0 : 1;  // the variance's side of the Add
  const std::optional<float> eps = scalar_constant(g, an.inputs[1 - side]);
  const auto var = uses.producer_of_type(g, an.inputs[side], "ReduceMean");
  if (!eps || !var || !uses.read_once(g, an.inputs[side]) ||
      trailing_axes_start(g, *var, static_cast<int64_t>(xs.size())) != axis)
    return std::nullopt;
  m.epsilon = *eps;
  const std::string& squares = g.node(*var).inputs[0];
  const auto pow = uses.producer_of_type(g, squares, "Pow");
  if (!pow || !uses.read_once(g, squares) || g.node(*pow).inputs[0] != centred ||
      scalar_constant(g, g.node(*pow).inputs[1]) != 2.0f)
    return std::nullopt;
  // * gamma, then + beta when the sum's other operand is a row constant too.
  const auto mul = uses.only_reader_of_type(g, dn.outputs[0], "Mul");
  if (!mul) return std::nullopt;
  const std::string* gamma = other_input(g.node(*mul), dn.outputs[0]);
  if (!gamma || !is_row_constant(g, *gamma, xs, m.axis)) return std::nullopt;
  m.gamma = *gamma;
  m.nodes = {*mean, *sub, *pow, *var, *add_eps, *sqrt, div, *mul};
  if (const auto add = uses.only_reader_of_type(g, g.node(*mul).outputs[0], "Add")) {
    const std::string* beta = other_input(g.node(*add), g.node(*mul).outputs[0]);
    if (beta && is_row_constant(g, *beta, xs, m.axis)) {
      m.beta = *beta;
      m.nodes.push_back(*add);
    }
  }
  if (g.type(g.node(m.nodes.back()).outputs[0]) != g.type(m.x)) return std::nullopt;
  std::sort(m.nodes.begin(), m.nodes.end());
  return m;
}

}  // namespace

PassLog fuse_layer_norm(CompileGraph& g) {
  PassLog log{"fuse_layer_norm", {}};
  const TensorUses uses(g);
  std::vector<bool> removed(g.size(), false);
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.node(i).op_type != "Div" || removed[i]) continue;
    const std::optional<Match> m = match_at(g, uses, i);
    if (!m || std::any_of(m->nodes.begin(), m->nodes.end(), [&](size_t k) { return removed[k]; })) continue;
    Attributes attrs;
    attrs.set("axis", m->axis);
    attrs.set("epsilon", static_cast<double>(m->epsilon));
    std::vector<std::string> inputs = {m->x, m->gamma};
    if (!m->beta.empty()) inputs.push_back(m->beta);
    log.actions.push_back(
        replace_pattern(g, m->nodes, "LayerNormalization", std::move(attrs), std::move(inputs), removed));
  }
  g.remove_nodes(removed);
  return log;
}

}  // namespace minfer
