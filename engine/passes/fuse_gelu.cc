#include "engine/passes/fuse_gelu.h"

#include <algorithm>
#include <cmath>

#include "engine/passes/replace_pattern.h"
#include "engine/passes/tensor_uses.h"

namespace minfer {
namespace {

bool near(std::optional<float> v, double want) {
  return v && std::fabs(*v - want) <= 1e-6 * std::fabs(want);
}

// The scaled input's node: x / sqrt 2 or x * (1 / sqrt 2); x when it is one.
std::optional<std::string> scaled_input(const CompileGraph& g, size_t node) {
  const Node& n = g.node(node);
  if (n.inputs.size() != 2) return std::nullopt;
  const std::optional<float> c = scalar_constant(g, n.inputs[1]);
  if (n.op_type == "Div" && near(c, std::sqrt(2.0))) return n.inputs[0];
  if (n.op_type == "Mul" && near(c, std::sqrt(0.5))) return n.inputs[0];
  return std::nullopt;
}

struct Match {
  std::vector<size_t> nodes;  // scale, Erf, Add, Mul, Mul
  std::string x;
};

std::optional<Match> match_at(const CompileGraph& g, const TensorUses& uses, size_t erf) {
  const Node& en = g.node(erf);
  auto p = uses.producer.find(en.inputs[0]);
  if (p == uses.producer.end() || !uses.read_once(g, en.inputs[0])) return std::nullopt;
  Match m;
  const std::optional<std::string> x = scaled_input(g, p->second);
  if (!x) return std::nullopt;
  m.x = *x;
  const auto add = uses.only_reader_of_type(g, en.outputs[0], "Add");
  if (!add) return std::nullopt;
  const std::string* one = other_input(g.node(*add), en.outputs[0]);
  if (!one || !near(scalar_constant(g, *one), 1.0)) return std::nullopt;
  const auto mul = uses.only_reader_of_type(g, g.node(*add).outputs[0], "Mul");
  if (!mul) return std::nullopt;
  const std::string* x_again = other_input(g.node(*mul), g.node(*add).outputs[0]);
  if (!x_again || *x_again != m.x) return std::nullopt;
  const auto half = uses.only_reader_of_type(g, g.node(*mul).outputs[0], "Mul");
  if (!half) return std::nullopt;
  const std::string* c = other_input(g.node(*half), g.node(*mul).outputs[0]);
  if (!c || !near(scalar_constant(g, *c), 0.5)) return std::nullopt;
  if (g.type(g.node(*half).outputs[0]) != g.type(m.x)) return std::nullopt;
  m.nodes = {p->second, erf, *add, *mul, *half};
  return m;
}

}  // namespace

PassLog fuse_gelu(CompileGraph& g) {
  PassLog log{"fuse_gelu", {}};
  const TensorUses uses(g);
  std::vector<bool> removed(g.size(), false);
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.node(i).op_type != "Erf" || g.node(i).inputs.size() != 1) continue;
    const std::optional<Match> m = match_at(g, uses, i);
    if (!m || std::any_of(m->nodes.begin(), m->nodes.end(), [&](size_t k) { return removed[k]; })) continue;
    log.actions.push_back(replace_pattern(g, m->nodes, "Gelu", {}, {m->x}, removed));
  }
  g.remove_nodes(removed);
  return log;
}

}  // namespace minfer
