#include "engine/compiled_model.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/compile_graph.h"
#include "engine/memory_planner.h"
#include "graph/model_loader.h"
#include "ops/kernels/workspace.h"
#include "profiler/isa.h"
#include "profiler/run_profile.h"

namespace minfer {
namespace {

MemoryBudget constants_budget(const Graph& graph, int64_t max_memory) {
  MemoryBudget budget(max_memory);
  for (const auto& [name, tensor] : graph.initializers) budget.reserve(tensor.bytes(), fmt::format("'{}'", name));
  return budget;
}

}  // namespace

CompiledModel::CompiledModel(Graph graph, CompileOptions options, double load_ms)
    : options_(std::move(options)), load_ms_(load_ms) {
  const Clock::time_point start = Clock::now();
  if (options_.num_threads < 1)
    throw UsageError(fmt::format("num_threads must be at least 1, got {}", options_.num_threads));
  if (options_.max_memory <= 0)
    throw UsageError(fmt::format("max_memory must be positive, got {}", options_.max_memory));
  active_isa();  // a refused MINFER_ISA fails every compile, even of a model whose ops need no kernel
  for (const AttributeOverride& o : options_.attribute_overrides)
    for (Node& n : graph.nodes)
      if (n.op_type == o.op_type) n.attrs.set(o.attribute, o.value);
  MemoryBudget budget = constants_budget(graph, options_.max_memory);
  CompileGraph g(std::move(graph), budget);
  cost_before_passes_ = g.total_cost();
  pass_logs_ = run_passes(g, options_.passes);
  bind_steps(g);
  ops_built_ = g.ops_built();
  graph_ = std::move(g).take_graph();
  // Constants are read through pointers into graph_: set them now it has its final home.
  for (ValueSlot& v : values_)
    if (auto c = graph_.initializers.find(v.name); c != graph_.initializers.end()) v.constant = &c->second;
  plan_memory_layout();
  check_memory_limit();
  compile_ms_ = elapsed_ms(start, Clock::now());
}

int CompiledModel::value_index(const std::string& name) const {
  auto it = value_of_.find(name);
  if (it == value_of_.end()) throw UsageError(fmt::format("{}: no tensor named '{}'", graph_.source, name));
  return it->second;
}

int CompiledModel::step_index(const std::string& step_name) const {
  auto it = step_of_.find(step_name);
  return it == step_of_.end() ? -1 : it->second;
}

Cost CompiledModel::total_cost() const {
  Cost total;
  for (const Step& s : steps_) total += s.cost;
  return total;
}

void CompiledModel::bind_steps(const CompileGraph& g) {
  auto slot = [&](const std::string& name) {
    auto [it, fresh] = value_of_.emplace(name, static_cast<int>(values_.size()));
    if (fresh) values_.push_back({name, g.type(name), nullptr, -1});
    return it->second;
  };
  for (const GraphInput& in : g.graph().inputs) inputs_.push_back(slot(in.name));
  const BindContext context{options_.num_threads, active_isa()};
  for (size_t i = 0; i < g.size(); ++i) {
    const Node& node = g.node(i);
    Step step;
    step.name = node.name;
    step.op_type = node.op_type;
    step.op = g.shared_op(i);
    with_node_context(g.graph(), node, [&] {
      const OpSignature sig = g.signature(i);
      step.cost = step.op->cost(sig);
      step.kernel = step.op->bind(sig, context);
    });
    for (const std::string& in : node.inputs) step.inputs.push_back(in.empty() ? -1 : slot(in));
    for (const std::string& out : node.outputs) step.outputs.push_back(out.empty() ? -1 : slot(out));
    step_of_.emplace(step.name, static_cast<int>(steps_.size()));
    steps_.push_back(std::move(step));
  }
  for (const std::string& o : g.graph().outputs) outputs_.push_back(slot(o));
}

// The constants and one session's arena, before any session allocates it.
void CompiledModel::check_memory_limit() const {
  int64_t constant_bytes = 0;
  for (const auto& entry : graph_.initializers) constant_bytes = checked_add({constant_bytes, entry.second.bytes()});
  int64_t total = 0;
  if (__builtin_add_overflow(constant_bytes, arena_bytes_, &total) || total > options_.max_memory)
    throw ModelError(fmt::format(
        "{}: the constants ({}) and one session's activation arena ({}) need {}: over the memory limit of {} "
        "(--max_memory)",
        graph_.source, format_bytes(constant_bytes), format_bytes(arena_bytes_), format_bytes(total),
        format_bytes(options_.max_memory)));
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
  std::vector<bool> pinned(values_.size(), false);  // graph inputs and outputs: never overwritten
  for (int v : inputs_) {
    first[v] = 0;
    end[v] = last;
    pinned[v] = true;
  }
  for (int v : outputs_) {
    end[v] = last;
    pinned[v] = true;
  }

  // A Concat's input whose last reader is the Concat goes inside the Concat's output, at
  // its place there (KernelFacts::input_offsets), where its producer writes it and the
  // Concat finds it: the output's buffer then lives from the first such input's step. Not
  // a graph input or output, a constant, an input the Concat reads twice, one placed in
  // another output itself, or one off the arena's 64-byte alignment.
  auto bytes_of = [&](int v) { return num_elements(values_[v].type.shape) * dtype_size(values_[v].type.dtype); };
  std::vector<int> host(values_.size(), -1);  // the output a tensor lies in
  std::vector<int64_t> host_offset(values_.size(), 0);
  std::vector<bool> hosts(values_.size(), false);
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    const std::vector<int64_t>& at = step.facts().input_offsets;
    const int y = step.outputs.empty() ? -1 : step.outputs[0];
    if (at.size() != step.inputs.size() || y < 0) continue;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const int v = step.inputs[i];
      if (v < 0 || values_[v].constant || pinned[v] || hosts[v] || end[v] != static_cast<int>(s) ||
          std::count(step.inputs.begin(), step.inputs.end(), v) != 1 || at[i] % 64 != 0)
        continue;
      host[v] = y;
      host_offset[v] = at[i];
      steps_[s].bytes_in_place += bytes_of(v);
      hosts[y] = true;
      first[y] = std::min(first[y], first[v]);
    }
  }

  // One buffer per tensor, except that an op may write its output over the input its
  // traits (or its kernel's facts) name when that input dies at that step, has the
  // output's size and is no other input of the step (a Conv reading its residual as its
  // input too would overwrite rows it still reads); never a graph input or output, nor a
  // constant.
  std::vector<int> buffer_of(values_.size(), -1);
  auto new_buffer = [&](int v) {
    buffer_of[v] = static_cast<int>(buffers_.size());
    buffers_.push_back({values_[v].name, {values_[v].name}, 0, bytes_of(v), first[v], std::max(first[v], end[v])});
  };
  for (int v : inputs_) new_buffer(v);
  std::vector<int> workspace_buffer(steps_.size(), -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    const int in_place = step.facts().inplace_input >= 0 ? step.facts().inplace_input : step.op->traits().inplace_input;
    for (size_t o = 0; o < step.outputs.size(); ++o) {
      const int v = step.outputs[o];
      // Omitted, already placed (an output listed twice), or inside a Concat's output.
      if (v < 0 || buffer_of[v] >= 0 || host[v] >= 0) continue;
      const int src =
          o == 0 && in_place >= 0 && in_place < static_cast<int>(step.inputs.size()) ? step.inputs[in_place] : -1;
      const auto read_once = [&] { return std::count(step.inputs.begin(), step.inputs.end(), src) == 1; };
      if (src >= 0 && !values_[src].constant && !pinned[src] && host[src] < 0 && end[src] == static_cast<int>(s) &&
          buffers_[buffer_of[src]].bytes == bytes_of(v) && read_once()) {
        BufferSpan& b = buffers_[buffer_of[src]];
        b.tensors.push_back(values_[v].name);
        b.last_step = std::max(first[v], end[v]);
        buffer_of[v] = buffer_of[src];
        continue;
      }
      new_buffer(v);
    }
    if (step.facts().workspace_bytes > 0) {
      workspace_buffer[s] = static_cast<int>(buffers_.size());
      const std::string name = step.name + ":workspace";
      buffers_.push_back({name, {name}, 0, step.facts().workspace_bytes, static_cast<int>(s), static_cast<int>(s)});
    }
  }
  // The threads' scratch lives through the run: each thread's piece is the same memory
  // in every step (ops/kernels/workspace.h).
  int thread_scratch_buffer = -1;
  for (const Step& step : steps_)
    thread_scratch_bytes_ = std::max(thread_scratch_bytes_, whole_line_bytes(step.facts().thread_scratch_bytes));
  if (thread_scratch_bytes_ > 0) {
    thread_scratch_buffer = static_cast<int>(buffers_.size());
    buffers_.push_back({"thread scratch",
                        {"thread scratch"},
                        0,
                        checked_mul({thread_scratch_bytes_, options_.num_threads}),
                        0,
                        std::max(0, static_cast<int>(steps_.size()) - 1)});
  }
  arena_bytes_ = plan_memory(buffers_);
  if (thread_scratch_buffer >= 0) thread_scratch_offset_ = buffers_[thread_scratch_buffer].offset;
  lower_bound_bytes_ = live_bytes_lower_bound(buffers_);
  naive_bytes_ = 0;
  for (const BufferSpan& b : buffers_) naive_bytes_ += b.bytes * static_cast<int64_t>(b.tensors.size());
  for (size_t v = 0; v < values_.size(); ++v)
    if (buffer_of[v] >= 0) values_[v].offset = buffers_[buffer_of[v]].offset;
  for (size_t v = 0; v < values_.size(); ++v)
    if (host[v] >= 0) {
      values_[v].offset = values_[host[v]].offset + host_offset[v];
      buffers_[buffer_of[host[v]]].tensors.push_back(values_[v].name);
      naive_bytes_ += bytes_of(static_cast<int>(v));
    }
  for (size_t s = 0; s < steps_.size(); ++s)
    if (workspace_buffer[s] >= 0) steps_[s].workspace_offset = buffers_[workspace_buffer[s]].offset;
}

std::shared_ptr<const CompiledModel> compile(Graph graph, const CompileOptions& options) {
  return std::make_shared<const CompiledModel>(std::move(graph), options);
}

std::shared_ptr<const CompiledModel> compile_file(const std::string& path, const CompileOptions& options,
                                                  const std::map<std::string, Shape>& input_shapes) {
  LoadOptions load;
  load.input_shapes = input_shapes;
  load.max_memory = options.max_memory;
  const Clock::time_point start = Clock::now();
  Graph graph = load_model(path, load);
  return std::make_shared<const CompiledModel>(std::move(graph), options, elapsed_ms(start, Clock::now()));
}

FoldedGraph fold_graph(Graph graph, int64_t max_memory) {
  MemoryBudget budget = constants_budget(graph, max_memory);
  CompileGraph g(std::move(graph), budget);
  FoldedGraph folded;
  for (const std::string& out : g.graph().outputs) folded.output_types[out] = g.type(out);
  folded.graph = std::move(g).take_graph();
  return folded;
}

}  // namespace minfer
