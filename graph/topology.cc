#include "graph/topology.h"

#include <fmt/format.h>

#include <queue>
#include <unordered_set>

#include "graph/errors.h"

namespace minfer {

Topology build_topology(const Graph& g) {
  Topology t;
  // Nothing would be computed, and every later step assumes something is.
  if (g.outputs.empty()) throw ModelError(fmt::format("{}: the graph has no outputs", g.source));
  std::unordered_set<std::string> sources;  // graph inputs and initializers
  for (const GraphInput& in : g.inputs) {
    if (g.initializers.count(in.name))
      throw ModelError(fmt::format("{}: tensor '{}' is both a graph input and an initializer", g.source, in.name));
    if (!sources.insert(in.name).second)
      throw ModelError(fmt::format("{}: graph input '{}' is declared twice", g.source, in.name));
  }
  for (const auto& [name, tensor] : g.initializers) sources.insert(name);
  t.producer.reserve(g.nodes.size());
  t.consumers.reserve(g.nodes.size());

  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (const std::string& out : n.outputs) {
      if (out.empty()) continue;  // omitted optional output
      if (sources.count(out))
        throw ModelError(
            fmt::format("{}: output '{}' is already a graph input or initializer", node_context(g, n), out));
      auto [it, fresh] = t.producer.emplace(out, i);
      if (!fresh)
        throw ModelError(fmt::format("{}: output '{}' is also produced by node '{}'", node_context(g, n), out,
                                     g.nodes[it->second].name));
    }
  }
  // Each node waits for the distinct node outputs it reads.
  std::vector<size_t> pending(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (const std::string& in : n.inputs) {
      if (in.empty()) continue;  // omitted optional input
      const bool produced = t.producer.count(in) > 0;
      if (!produced && !sources.count(in))
        throw ModelError(fmt::format("{}: input '{}' is not a graph input, an initializer or any node's output",
                                     node_context(g, n), in));
      std::vector<size_t>& readers = t.consumers[in];
      if (!readers.empty() && readers.back() == i) continue;  // a node reading one tensor twice waits for it once
      readers.push_back(i);
      if (produced) ++pending[i];
    }
  }
  for (const std::string& out : g.outputs)
    if (!sources.count(out) && !t.producer.count(out))
      throw ModelError(fmt::format("{}: graph output '{}' is not produced by any node", g.source, out));

  // Kahn's algorithm; a min-heap on the node index keeps the file's order where it can.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (pending[i] == 0) ready.push(i);
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    t.order.push_back(i);
    for (const std::string& out : g.nodes[i].outputs) {
      auto it = t.consumers.find(out);
      if (it == t.consumers.end()) continue;
      for (size_t c : it->second)
        if (--pending[c] == 0) ready.push(c);
    }
  }
  if (t.order.size() != g.nodes.size()) {
    // Nodes downstream of a cycle are stuck too; walk back through stuck producers
    // until a node repeats, so the message names a node that is on the cycle.
    size_t at = 0;
    while (pending[at] == 0) ++at;
    std::vector<bool> visited(g.nodes.size(), false);
    while (!visited[at]) {
      visited[at] = true;
      for (const std::string& in : g.nodes[at].inputs) {
        auto p = t.producer.find(in);
        if (p != t.producer.end() && pending[p->second] != 0) {
          at = p->second;
          break;
        }
      }
    }
    throw ModelError(
        fmt::format("{}: is part of a cycle (its inputs depend on its own outputs)", node_context(g, g.nodes[at])));
  }
  return t;
}

}  // namespace minfer
