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
  if (!index.feeds_only(g, bn.inputs[0], bn_index))
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

void fold(Graph& g, size_t producer_index, size_t bn_index) {
  Node& p = g.nodes[producer_index];
  const Node bn = g.nodes[bn_index];
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

  const std::string w_name = unique_tensor_name(g, p.name + ".W_folded");
  g.initializers[w_name] = std::move(w2);
  const std::string b_name = unique_tensor_name(g, p.name + ".B_folded");
  g.initializers[b_name] = std::move(b2);
  p.inputs.resize(std::max<size_t>(p.inputs.size(), 3));
  p.inputs[1] = w_name;
  p.inputs[2] = b_name;
  p.outputs[0] = bn.outputs[0];
  p.name += "+" + bn.name;
  g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(bn_index));
}

}  // namespace

PassLog fold_batch_norm(Graph& g) {
  PassLog log{"fold_bn", {}};
  std::vector<std::string> kept;  // BNs already reported, so the scan moves past them
  for (;;) {
    const GraphIndex index(g);
    bool folded = false;
    for (size_t i = 0; i < g.nodes.size() && !folded; ++i) {
      const Node& bn = g.nodes[i];
      if (bn.op_type != "BatchNormalization" || std::count(kept.begin(), kept.end(), bn.name)) continue;
      auto p = index.producer.find(bn.inputs.empty() ? "" : bn.inputs[0]);
      const Node* producer = p == index.producer.end() ? nullptr : &g.nodes[p->second];
      const std::string blocker = fold_blocker(g, index, bn, i, producer);
      if (!blocker.empty()) {
        log.actions.push_back({"kept", {bn.name}, bn.name, blocker});
        kept.push_back(bn.name);
        continue;
      }
      const std::vector<std::string> nodes = {producer->name, bn.name};
      fold(g, p->second, i);
      log.actions.push_back({"folded", nodes, g.nodes[p->second < i ? p->second : p->second - 1].name, ""});
      folded = true;
    }
    if (!folded) break;
  }
  drop_unused_initializers(g);
  return log;
}

}  // namespace minfer
