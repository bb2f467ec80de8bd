#include "engine/compiled_model.h"

#include <fmt/format.h>

#include "graph/shape_inference.h"
#include "graph/topology.h"

namespace minfer {

CompiledModel::CompiledModel(Graph graph, CompileOptions options)
    : graph_(std::move(graph)), options_(options) {
  if (options_.num_threads < 1) throw UsageError(fmt::format("num_threads must be at least 1, got {}", options_.num_threads));
  for (const AttributeOverride& o : options_.attribute_overrides)
    for (Node& n : graph_.nodes)
      if (n.op_type == o.op_type) n.attrs.set(o.attribute, o.value);
  build_steps();
  plan_memory_layout();
}

int CompiledModel::value_index(const std::string& name) const {
  for (size_t i = 0; i < values_.size(); ++i)
    if (values_[i].name == name) return static_cast<int>(i);
  throw UsageError(fmt::format("{}: no tensor named '{}'", graph_.source, name));
}

Cost CompiledModel::total_cost() const {
  Cost total;
  for (const Step& s : steps_) total += s.cost;
  return total;
}

void CompiledModel::build_steps() {
  const Topology topo = build_topology(graph_);
  const ShapeMap shapes = infer_shapes(graph_, topo);

  std::map<std::string, int> slot_of;
  auto slot = [&](const std::string& name) {
    auto [it, fresh] = slot_of.emplace(name, static_cast<int>(values_.size()));
    if (fresh) {
      ValueSlot v{name, shapes.at(name)};
      if (auto c = graph_.initializers.find(name); c != graph_.initializers.end()) v.constant = c->second.data.data();
      values_.push_back(std::move(v));
    }
    return it->second;
  };
  for (const GraphInput& in : graph_.inputs) inputs_.push_back(slot(in.name));

  for (size_t index : topo.order) {
    const Node& node = graph_.nodes[index];
    Step step;
    step.name = node.name;
    step.op_type = node.op_type;
    with_node_context(graph_, node, [&] {
      const ArgInfos in = arg_infos(graph_, node, shapes);
      std::vector<Shape> out;
      for (const std::string& o : node.outputs) out.push_back(shapes.at(o));
      step.op = create_op(node);
      step.cost = step.op->cost(in, out);
      step.kind = step.op->kind(in);
      step.details = step.op->details(in, out);
      step.workspace_bytes = step.op->workspace_bytes(in, out, options_.num_threads);
      step.op->prepare(in, out);
    });
    for (const std::string& i : node.inputs) step.inputs.push_back(i.empty() ? -1 : slot(i));
    for (const std::string& o : node.outputs) step.outputs.push_back(slot(o));
    steps_.push_back(std::move(step));
  }
  for (const std::string& o : graph_.outputs) outputs_.push_back(slot(o));
}

void CompiledModel::plan_memory_layout() {
  // Lifetimes in steps: a tensor lives from the step that writes it to the last step
  // that reads it. Graph inputs and outputs live through the whole run: a caller sets
  // the inputs once and runs many times, and reads the outputs afterwards.
  const int last = std::max<int>(0, static_cast<int>(steps_.size()) - 1);
  std::vector<BufferRequest> requests;
  std::vector<int> request_value;  // value slot per request, -1 for a workspace
  std::vector<int> first(values_.size(), 0), end(values_.size(), -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (int v : steps_[s].outputs) first[v] = end[v] = static_cast<int>(s);
    for (int v : steps_[s].inputs)
      if (v >= 0) end[v] = std::max(end[v], static_cast<int>(s));
  }
  for (int v : inputs_) first[v] = 0, end[v] = last;
  for (int v : outputs_) end[v] = last;
  for (size_t v = 0; v < values_.size(); ++v) {
    if (values_[v].constant) continue;
    requests.push_back({4 * num_elements(values_[v].shape), first[v], std::max(first[v], end[v])});
    request_value.push_back(static_cast<int>(v));
  }
  for (size_t s = 0; s < steps_.size(); ++s) {
    if (steps_[s].workspace_bytes == 0) continue;
    requests.push_back({steps_[s].workspace_bytes, static_cast<int>(s), static_cast<int>(s)});
    request_value.push_back(-1 - static_cast<int>(s));
  }
  const MemoryPlan plan = plan_memory(requests);
  arena_bytes_ = plan.arena_bytes;
  naive_bytes_ = 0;
  for (size_t r = 0; r < requests.size(); ++r) {
    naive_bytes_ += requests[r].bytes;
    std::string name;
    if (request_value[r] >= 0) {
      values_[request_value[r]].offset = plan.offsets[r];
      name = values_[request_value[r]].name;
    } else {
      Step& s = steps_[-1 - request_value[r]];
      s.workspace_offset = plan.offsets[r];
      name = s.name + ":workspace";
    }
    buffers_.push_back({name, plan.offsets[r], requests[r].bytes, requests[r].first_step, requests[r].last_step});
  }
}

std::shared_ptr<const CompiledModel> compile(Graph graph, const CompileOptions& options) {
  return std::make_shared<const CompiledModel>(std::move(graph), options);
}

}  // namespace minfer
