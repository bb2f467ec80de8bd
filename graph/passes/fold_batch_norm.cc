#include "graph/passes/fold_batch_norm.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "graph/passes/graph_index.h"

namespace minfer {
namespace {

const Tensor* constant(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i].empty()) return nullptr;
  auto it = g.initializers.find(n.inputs[i]);
  return it == g.initializers.end() ? nullptr : &it->second;
}

// Per output channel: scale s = gamma / sqrt(var + eps) and shift t = beta - mean * s.
struct ChannelAffine {
  std::vector<double> scale, shift;
};

// Why the BN cannot be folded into `producer`, or "" when it can.
std::string fold_blocker(const Graph& g, const GraphIndex& index, const Node& bn, size_t bn_index,
                         const Node* producer) {
  if (!producer) return "its input is not produced by a node";
  const std::string& t = producer->op_type;
  if (t != "Conv" && t != "ConvTranspose" && t != "Gemm")
    return fmt::format("it follows '{}' ({}), not a Conv, ConvTranspose or Gemm", producer->name, t);
  if (index.is_graph_output(bn.inputs[0])) return fmt::format("the output of '{}' is a graph output", producer->name);
  if (!index.feeds_only(bn.inputs[0], bn_index))
    return fmt::format("the output of '{}' is also read elsewhere", producer->name);
  for (size_t i = 1; i < 5; ++i)
    if (!constant(g, bn, i)) return "its statistics are not constants";
  if (!constant(g, *producer, 1)) return fmt::format("the weights of '{}' are not constants", producer->name);
  if (producer->inputs.size() > 2 && !producer->inputs[2].empty() && !constant(g, *producer, 2))
    return fmt::format("the bias of '{}' is not a constant", producer->name);
  if (t == "Gemm" && producer->inputs.size() > 2 && !producer->inputs[2].empty()) {
    const Shape& c = constant(g, *producer, 2)->shape;
    if (c.size() == 2 && c[0] != 1) return fmt::format("the bias C of '{}' varies along rows", producer->name);
  }
  return "";
}

ChannelAffine channel_affine(const Graph& g, const Node& bn) {
  const double eps = bn.attrs.get_float("epsilon", 1e-5);
  const Tensor &gamma = *constant(g, bn, 1), &beta = *constant(g, bn, 2), &mean = *constant(g, bn, 3),
               &var = *constant(g, bn, 4);
  ChannelAffine a;
  for (size_t c = 0; c < gamma.data.size(); ++c) {
    const double s = gamma.data[c] / std::sqrt(double(var.data[c]) + eps);
    a.scale.push_back(s);
    a.shift.push_back(beta.data[c] - mean.data[c] * s);
  }
  return a;
}

// The output channel each weight element contributes to, by the producer's layout:
// Conv [Cout, Cin/g, ...], ConvTranspose [Cin, Cout/g, ...], Gemm B [K, N] or [N, K].
int64_t output_channel(const Node& p, const Shape& w, int64_t flat) {
  const int64_t inner = num_elements(Shape(w.begin() + 2, w.end()));
  if (p.op_type == "Conv") return flat / (w[1] * inner);
  if (p.op_type == "ConvTranspose") {
    const int64_t group = p.attrs.get_int("group", 1);
    const int64_t ic = flat / (w[1] * inner), j = (flat / inner) % w[1];
    return (ic / (w[0] / group)) * w[1] + j;
  }
  const bool trans_b = p.attrs.get_int("transB", 0) != 0;  // Gemm
  return trans_b ? flat / w[1] : flat % w[1];
}

int64_t output_channels(const Node& p, const Shape& w) {
  if (p.op_type == "Conv") return w[0];
  if (p.op_type == "ConvTranspose") return w[1] * p.attrs.get_int("group", 1);
  return p.attrs.get_int("transB", 0) != 0 ? w[0] : w[1];
}

// Rewrites the producer to compute the BN's output; the caller removes the BN.
void fold(Graph& g, TensorNames& names, Node& p, const Node& bn) {
  const ChannelAffine a = channel_affine(g, bn);
  const Tensor& w = *constant(g, p, 1);
  if (output_channels(p, w.shape) != static_cast<int64_t>(a.scale.size()))
    throw std::logic_error("fold_batch_norm: channel count mismatch survived validation");

  Tensor w2{w.shape, std::vector<float>(w.data.size())};
  for (size_t i = 0; i < w.data.size(); ++i)
    w2.data[i] = static_cast<float>(w.data[i] * a.scale[output_channel(p, w.shape, static_cast<int64_t>(i))]);

  // Old bias per output channel; Gemm's is beta * C (C broadcast along columns).
  std::vector<double> bias(a.scale.size(), 0.0);
  if (const Tensor* b = constant(g, p, 2)) {
    const double factor = p.op_type == "Gemm" ? p.attrs.get_float("beta", 1.0) : 1.0;
    for (size_t c = 0; c < bias.size(); ++c) bias[c] = factor * b->data[b->data.size() == 1 ? 0 : c];
  }
  Tensor b2{{static_cast<int64_t>(bias.size())}, std::vector<float>(bias.size())};
  for (size_t c = 0; c < bias.size(); ++c) b2.data[c] = static_cast<float>(bias[c] * a.scale[c] + a.shift[c]);
  if (p.op_type == "Gemm") p.attrs.set("beta", 1.0);

  const std::string w_name = names.unique(p.name + ".W_folded");
  g.initializers[w_name] = std::move(w2);
  const std::string b_name = names.unique(p.name + ".B_folded");
  g.initializers[b_name] = std::move(b2);
  p.inputs.resize(std::max<size_t>(p.inputs.size(), 3));
  p.inputs[1] = w_name;
  p.inputs[2] = b_name;
  p.outputs[0] = bn.outputs[0];
  p.name += "+" + bn.name;
}

}  // namespace

PassLog fold_batch_norm(Graph& g) {
  PassLog log{"fold_bn", {}};
  if (std::none_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op_type == "BatchNormalization"; })) {
    drop_unused_initializers(g);
    return log;
  }
  GraphIndex index(g);
  TensorNames names(g);
  std::vector<bool> removed(g.nodes.size(), false);
  // A producer's "folded" action, which a second BN folding into it (BN after BN) extends.
  std::vector<int> action_of(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& bn = g.nodes[i];
    if (bn.op_type != "BatchNormalization") continue;
    auto p = index.producer.find(bn.inputs.empty() ? "" : bn.inputs[0]);
    const Node* producer = p == index.producer.end() ? nullptr : &g.nodes[p->second];
    const std::string blocker = fold_blocker(g, index, bn, i, producer);
    if (!blocker.empty()) {
      log.actions.push_back({"kept", {bn.name}, bn.name, blocker});
      continue;
    }
    const size_t pi = p->second;
    const std::string producer_name = producer->name;
    index.producer.erase(p);
    fold(g, names, g.nodes[pi], bn);
    index.producer[g.nodes[pi].outputs[0]] = pi;
    removed[i] = true;
    if (action_of[pi] >= 0) {
      PassAction& a = log.actions[static_cast<size_t>(action_of[pi])];
      a.nodes.push_back(bn.name);
      a.result = g.nodes[pi].name;
    } else {
      action_of[pi] = static_cast<int>(log.actions.size());
      log.actions.push_back({"folded", {producer_name, bn.name}, g.nodes[pi].name, ""});
    }
  }
  erase_nodes(g, removed);
  drop_unused_initializers(g);
  return log;
}

}  // namespace minfer
