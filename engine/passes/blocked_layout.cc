#include "engine/passes/blocked_layout.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "engine/passes/tensor_uses.h"
#include "ops/blocked_layout.h"

namespace minfer {
namespace {

// The nodes' layout support, kept only where NCHWc is their preferred layout, all with
// the lanes of the first such node (one target's kernels share them).
std::vector<BlockedLayoutSupport> members(const CompileGraph& g, Isa isa) {
  std::vector<BlockedLayoutSupport> support(g.size());
  int64_t lanes = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const BlockedLayoutSupport s =
        with_node_context(g.graph(), g.node(i), [&] { return g.op(i).blocked_layout(g.signature(i), isa); });
    if (!s.preferred || s.lanes <= 0 || (lanes && s.lanes != lanes)) continue;
    lanes = s.lanes;
    support[i] = s;
  }
  return support;
}

// Which members write NCHWc: those whose output a member reads as its input 0 (a weak
// one only where every reader reads NCHWc), as the residual of an NCHWc output or as any
// input of a same-layout op in the region, and
// which may start a region or read NCHWc inputs; never a graph output. From every
// member that can, each round drops the ones that no longer qualify (last node first,
// so a reader's choice counts), until none changes.
std::vector<bool> blocked_outputs(const CompileGraph& g, const std::vector<BlockedLayoutSupport>& support) {
  const TensorUses uses(g);
  std::vector<bool> blocked(g.size());
  for (size_t i = 0; i < g.size(); ++i) blocked[i] = support[i].output;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = g.size(); i-- > 0;) {
      if (!blocked[i]) continue;
      const Node& node = g.node(i);
      const std::string& t = node.outputs[0];
      // Input 0 written NCHWc; for a same-layout op, every input.
      const auto written_blocked = [&](const std::string& in) {
        const auto producer = uses.producer.find(in);
        return producer != uses.producer.end() && blocked[producer->second];
      };
      bool input_blocked = support[i].input && written_blocked(node.inputs[0]);
      if (support[i].same_layout)
        for (const std::string& in : node.inputs) input_blocked = input_blocked && written_blocked(in);
      // Wanted by a reader that asks for NCHWc, or by weak ones where every reader reads it so.
      const auto readers = uses.readers.find(t);
      bool wanted = false, all_read_it = readers != uses.readers.end() && !readers->second.empty();
      if (!g.is_graph_output(t) && readers != uses.readers.end())
        for (size_t r : readers->second) {
          const Node& reader = g.node(r);
          const int residual = support[r].residual_input;
          const bool reads_all = support[r].same_layout && blocked[r];
          const bool reads = reads_all || (support[r].input && !support[r].same_layout && reader.inputs[0] == t) ||
                             (blocked[r] && residual >= 0 && static_cast<size_t>(residual) < reader.inputs.size() &&
                              reader.inputs[static_cast<size_t>(residual)] == t);
          if (reads && !support[r].weak_input) wanted = true;
          all_read_it = all_read_it && reads;
        }
      else
        all_read_it = false;
      wanted = wanted || all_read_it;
      if (!wanted || !(support[i].starts_region || input_blocked)) {
        blocked[i] = false;
        changed = true;
      }
    }
  }
  return blocked;
}

}  // namespace

PassLog blocked_layout(CompileGraph& g, Isa isa) {
  PassLog log{"blocked_layout", {}};
  const std::vector<BlockedLayoutSupport> support = members(g, isa);
  const std::vector<bool> out_blocked = blocked_outputs(g, support);
  // NCHW tensors a member needs in NCHWc (a residual): reordered once, before their
  // first reader, which then reads the NCHWc copy too.
  std::set<std::string> needs_copy;
  int64_t lanes = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (support[i].lanes) lanes = support[i].lanes;
  for (size_t i = 0; i < g.size(); ++i)
    if (out_blocked[i] && support[i].residual_input >= 0 &&
        static_cast<size_t>(support[i].residual_input) < g.node(i).inputs.size())
      needs_copy.insert(g.node(i).inputs[static_cast<size_t>(support[i].residual_input)]);
  std::map<std::string, std::string> blocked_of;  // tensor -> its NCHWc version
  std::set<std::string> only_blocked;             // tensors with no NCHW version (yet)
  // Puts a Reorder from `from` into `to` before node `at`; returns the index after it.
  const auto reorder = [&](size_t at, const std::string& from, const std::string& to, bool to_blocked) {
    const std::string target = to_blocked ? "NCHWc" : "NCHW";
    Node node{fmt::format("Reorder({} -> {})", from, layout_name(to_blocked ? lanes : 0)), "Reorder", {from}, {to}, {}};
    node.attrs.set("to", target);
    node.attrs.set("lanes", lanes);
    const std::string name = node.name;
    g.insert_node(at, std::move(node));
    log.actions.push_back(
        {"inserted",
         {name},
         name,
         fmt::format("{} -> {}", layout_name(to_blocked ? 0 : lanes), layout_name(to_blocked ? lanes : 0)),
         Cost{},
         g.cost(at),
         "Reorder"});
    return at + 1;
  };
  // An NCHWc copy of NCHW tensor t, put before node `at`; returns the index after it.
  const auto blocked_copy = [&](size_t at, const std::string& t) {
    const std::string b = g.unique_name(t + "@" + layout_name(lanes));
    blocked_of[t] = b;
    return reorder(at, t, b, true);
  };
  const size_t original = g.size();
  for (size_t orig = 0, i = 0; orig < original; ++orig, ++i) {
    const Node node = g.node(i);
    const BlockedLayoutSupport& s = support[orig];
    const int64_t out_lanes = out_blocked[orig] ? s.lanes : 0;
    int64_t in_lanes = 0;
    // A same-layout op in the region reads every input NCHWc (their producers write it).
    const bool all = s.same_layout && out_lanes;
    std::vector<std::string> inputs = node.inputs;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const std::string t = inputs[k];
      if (t.empty() || g.constant(t)) continue;
      if (needs_copy.count(t) && !blocked_of.count(t)) i = blocked_copy(i, t);
      const bool residual = out_lanes && s.residual_input == static_cast<int>(k);
      // A same-layout op writing NCHW reads NCHW too.
      if (all || (k == 0 && s.input && !s.same_layout && blocked_of.count(t)) || residual) {
        if (!blocked_of.count(t)) i = blocked_copy(i, t);
        inputs[k] = blocked_of[t];
        if (k == 0 || all) in_lanes = s.lanes;
      } else if (only_blocked.count(t)) {
        i = reorder(i, blocked_of[t], t, false);
        only_blocked.erase(t);
      }
    }
    if (!in_lanes && !out_lanes) continue;
    Attributes attrs = node.attrs;
    if (in_lanes) attrs.set(kBlockedInputAttr, in_lanes);
    std::vector<std::string> outputs = node.outputs;
    if (out_lanes) {
      attrs.set(kBlockedOutputAttr, out_lanes);
      const std::string b = g.unique_name(outputs[0] + "@" + layout_name(out_lanes));
      blocked_of[outputs[0]] = b;
      only_blocked.insert(outputs[0]);
      outputs[0] = b;
    }
    const Cost before = g.cost(i);
    g.set_inputs(i, std::move(inputs));
    g.set_outputs(i, std::move(outputs));
    g.set_attributes(i, std::move(attrs));
    g.retype_outputs(i);
    log.actions.push_back({"blocked",
                           {node.name},
                           node.name,
                           fmt::format("{} -> {}", layout_name(in_lanes), layout_name(out_lanes)),
                           before,
                           g.cost(i),
                           node.op_type});
  }
  return log;
}

}  // namespace minfer
