#include "engine/compiled_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/model_loader.h"
#include "graph/shape_inference.h"
#include "graph/topology.h"

namespace minfer {

CompiledModel::CompiledModel(Graph graph, CompileOptions options)
    : graph_(std::move(graph)), options_(options) {
  if (options_.num_threads < 1) throw UsageError(fmt::format("num_threads must be at least 1, got {}", options_.num_threads));
  if (options_.max_memory <= 0) throw UsageError(fmt::format("max_memory must be positive, got {}", options_.max_memory));
  for (const AttributeOverride& o : options_.attribute_overrides)
    for (Node& n : graph_.nodes)
      if (n.op_type == o.op_type) n.attrs.set(o.attribute, o.value);
  apply_passes();
  build_steps();
  plan_memory_layout();
  check_memory_limit();
}

int CompiledModel::value_index(const std::string& name) const {
  for (size_t i = 0; i < values_.size(); ++i)
    if (values_[i].name == name) return static_cast<int>(i);
  throw UsageError(fmt::format("{}: no tensor named '{}'", graph_.source, name));
}

Cost CompiledModel::original_cost(const std::vector<std::string>& node_names) const {
  Cost c;
  for (const std::string& n : node_names)
    if (auto it = original_costs_.find(n); it != original_costs_.end()) c += it->second;
  return c;
}

int CompiledModel::step_index(const std::string& step_name) const {
  for (size_t i = 0; i < steps_.size(); ++i)
    if (steps_[i].name == step_name) return static_cast<int>(i);
  return -1;
}

// Validates the graph as loaded (so errors name the user's nodes), records each node's
// cost, then rewrites it.
void CompiledModel::apply_passes() {
  const Topology topo = build_topology(graph_);
  const ShapeMap shapes = infer_shapes(graph_, topo);
  check_tensor_sizes(shapes);
  for (const Node& node : graph_.nodes) {
    with_node_context(graph_, node, [&] {
      std::vector<Shape> out;
      for (const std::string& o : node.outputs) out.push_back(o.empty() ? kOmittedOutput : shapes.at(o));
      const Cost c = create_op(node)->cost(arg_infos(graph_, node, shapes), out);
      original_costs_[node.name] = c;
      cost_before_passes_ += c;
    });
  }
  pass_logs_ = run_passes(graph_, options_.passes);
}

// Each tensor on its own within the limit, before any cost or scratch size is computed
// from the shapes: those products then stay far from overflowing.
void CompiledModel::check_tensor_sizes(const ShapeMap& shapes) const {
  const MemoryBudget budget(options_.max_memory);
  auto check = [&](const std::string& name, const char* what) {
    const Shape& shape = shapes.at(name);
    budget.check(tensor_bytes(num_elements(shape)), fmt::format("{} '{}' of shape {}", what, name, shape_str(shape)));
  };
  for (const GraphInput& in : graph_.inputs) {
    try {
      check(in.name, "input");
    } catch (const OpError& e) {
      throw ModelError(fmt::format("{}: {}", graph_.source, e.what()));
    }
  }
  for (const Node& node : graph_.nodes)
    with_node_context(graph_, node, [&] {
      for (const std::string& o : node.outputs)
        if (!o.empty()) check(o, "output");
    });
}

// The constants and one session's arena, before any session allocates it.
void CompiledModel::check_memory_limit() const {
  int64_t constant_bytes = 0;
  for (const auto& entry : graph_.initializers)
    constant_bytes = checked_add({constant_bytes, tensor_bytes(num_elements(entry.second.shape))});
  int64_t total = 0;
  if (__builtin_add_overflow(constant_bytes, arena_bytes_, &total) || total > options_.max_memory)
    throw ModelError(fmt::format(
        "{}: the constants ({}) and one session's activation arena ({}) need {}: over the memory limit of {} "
        "(--max_memory)",
        graph_.source, format_bytes(constant_bytes), format_bytes(arena_bytes_), format_bytes(total),
        format_bytes(options_.max_memory)));
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
      for (const std::string& o : node.outputs) out.push_back(o.empty() ? kOmittedOutput : shapes.at(o));
      step.op = create_op(node);
      step.cost = step.op->cost(in, out);
      step.kind = step.op->kind(in);
      step.details = step.op->details(in, out);
      step.workspace_bytes = step.op->workspace_bytes(in, out, options_.num_threads);
      step.op->prepare(in, out);
    });
    for (const std::string& i : node.inputs) step.inputs.push_back(i.empty() ? -1 : slot(i));
    for (const std::string& o : node.outputs) step.outputs.push_back(o.empty() ? -1 : slot(o));
    steps_.push_back(std::move(step));
  }
  for (const std::string& o : graph_.outputs) outputs_.push_back(slot(o));
}

void CompiledModel::plan_memory_layout() {
  // Lifetimes in steps: a tensor lives from the step that writes it to the last step
  // that reads it. Graph inputs and outputs live through the whole run: a caller sets
  // the inputs once and runs many times, and reads the outputs afterwards.
  const int last = std::max<int>(0, static_cast<int>(steps_.size()) - 1);
  std::vector<int> first(values_.size(), 0), end(values_.size(), -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (int v : steps_[s].outputs)
      if (v >= 0) first[v] = end[v] = static_cast<int>(s);
    for (int v : steps_[s].inputs)
      if (v >= 0) end[v] = std::max(end[v], static_cast<int>(s));
  }
  for (int v : inputs_) {
    first[v] = 0;
    end[v] = last;
  }
  for (int v : outputs_) end[v] = last;

  // One buffer per tensor, except that an element-wise op may write its output over an
  // input that dies at that step (same size; never a graph input, which must survive
  // for the next run, nor a constant).
  struct Buffer {
    std::vector<int> values;
    BufferRequest request;
  };
  std::vector<Buffer> buffers;
  std::vector<int> buffer_of(values_.size(), -1);
  auto is_graph_input = [&](int v) { return std::find(inputs_.begin(), inputs_.end(), v) != inputs_.end(); };
  for (int v : inputs_) {
    buffer_of[v] = static_cast<int>(buffers.size());
    buffers.push_back({{v}, {4 * num_elements(values_[v].shape), first[v], std::max(first[v], end[v])}});
  }
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    const int in_place = step.op->inplace_input();
    for (size_t o = 0; o < step.outputs.size(); ++o) {
      const int v = step.outputs[o];
      if (v < 0) continue;  // an omitted optional output has no buffer
      const int64_t bytes = 4 * num_elements(values_[v].shape);
      const int src = o == 0 && in_place >= 0 && in_place < static_cast<int>(step.inputs.size()) ? step.inputs[in_place] : -1;
      if (src >= 0 && !values_[src].constant && !is_graph_input(src) && end[src] == static_cast<int>(s) &&
          buffers[buffer_of[src]].request.bytes == bytes) {
        Buffer& b = buffers[buffer_of[src]];
        b.values.push_back(v);
        b.request.last_step = std::max(first[v], end[v]);
        buffer_of[v] = buffer_of[src];
        continue;
      }
      buffer_of[v] = static_cast<int>(buffers.size());
      buffers.push_back({{v}, {bytes, first[v], std::max(first[v], end[v])}});
    }
  }
  for (size_t s = 0; s < steps_.size(); ++s)
    if (steps_[s].workspace_bytes > 0)
      buffers.push_back({{-1 - static_cast<int>(s)}, {steps_[s].workspace_bytes, static_cast<int>(s), static_cast<int>(s)}});

  std::vector<BufferRequest> requests;
  for (const Buffer& b : buffers) requests.push_back(b.request);
  const MemoryPlan plan = plan_memory(requests);
  arena_bytes_ = plan.arena_bytes;
  lower_bound_bytes_ = live_bytes_lower_bound(requests);
  naive_bytes_ = 0;
  for (size_t b = 0; b < buffers.size(); ++b) {
    PlannedBuffer pb{{}, {}, plan.offsets[b], requests[b].bytes, requests[b].first_step, requests[b].last_step};
    for (int v : buffers[b].values) {
      if (v >= 0) {
        values_[v].offset = plan.offsets[b];
        pb.tensors.push_back(values_[v].name);
      } else {
        Step& s = steps_[-1 - v];
        s.workspace_offset = plan.offsets[b];
        pb.tensors.push_back(s.name + ":workspace");
      }
      naive_bytes_ += requests[b].bytes;
    }
    pb.name = pb.tensors.front();
    buffers_.push_back(std::move(pb));
  }
}

std::shared_ptr<const CompiledModel> compile(Graph graph, const CompileOptions& options) {
  return std::make_shared<const CompiledModel>(std::move(graph), options);
}

std::shared_ptr<const CompiledModel> compile_file(const std::string& path, const CompileOptions& options,
                                                  const std::map<std::string, Shape>& input_shapes) {
  LoadOptions load;
  load.input_shapes = input_shapes;
  load.max_memory = options.max_memory;
  return compile(load_model(path, load), options);
}

}  // namespace minfer
