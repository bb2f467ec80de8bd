#include "graph/passes/fuse_activations.h"

#include <fmt/format.h>

#include "graph/passes/graph_index.h"
#include "ops/activation.h"

namespace minfer {
namespace {

bool can_take_epilogue(const std::string& op_type) {
  return op_type == "Conv" || op_type == "ConvTranspose" || op_type == "Gemm";
}

// Clip's opset-11 bounds are inputs: folded into attributes when they are constants.
bool clip_bounds_as_attributes(const Graph& g, const Node& clip, Attributes& into) {
  static const char* names[] = {"", "min", "max"};
  for (size_t i = 1; i < clip.inputs.size() && i < 3; ++i) {
    if (clip.inputs[i].empty()) continue;
    auto it = g.initializers.find(clip.inputs[i]);
    if (it == g.initializers.end() || it->second.data.size() != 1) return false;
    into.set(std::string("activation.") + names[i], static_cast<double>(it->second.data[0]));
  }
  return true;
}

}  // namespace

PassLog fuse_activations(Graph& g) {
  PassLog log{"fuse", {}};
  GraphIndex index(g);
  std::vector<bool> removed(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& act = g.nodes[i];
    if (activation_for(act).kind == ActivationKind::kNone || act.inputs.empty() || act.outputs.size() != 1) continue;
    auto p = index.producer.find(act.inputs[0]);
    // A producer whose output is a graph output (or read elsewhere) keeps it: feeds_only.
    if (p == index.producer.end() || !can_take_epilogue(g.nodes[p->second].op_type) ||
        g.nodes[p->second].attrs.has("activation") || !index.feeds_only(act.inputs[0], i))
      continue;
    Attributes fused;
    fused.set("activation", act.op_type);
    for (const auto& [name, value] : act.attrs.all()) fused.set("activation." + name, value);
    if (act.op_type == "Clip" && !clip_bounds_as_attributes(g, act, fused)) {
      log.actions.push_back({"kept", {act.name}, act.name, "its bounds are not constants"});
      continue;
    }
    Node& producer = g.nodes[p->second];
    for (const auto& [name, value] : fused.all()) producer.attrs.set(name, value);
    const std::vector<std::string> nodes = {producer.name, act.name};
    producer.outputs[0] = act.outputs[0];
    producer.name += "+" + act.name;
    log.actions.push_back({"fused", nodes, producer.name, ""});
    const size_t producer_index = p->second;
    index.producer.erase(p);
    index.producer[act.outputs[0]] = producer_index;
    removed[i] = true;
  }
  erase_nodes(g, removed);
  drop_unused_initializers(g);
  return log;
}

}  // namespace minfer
