// A graph compiled into an execution plan: order, shapes, one prepared op per step
// with its cost, and the memory plan. Immutable once built, so one CompiledModel
// serves any number of Sessions, also concurrently.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/memory_planner.h"
#include "graph/graph.h"
#include "graph/memory_limit.h"
#include "graph/passes/pipeline.h"
#include "ops/op.h"
#include "profiler/cost.h"

namespace minfer {

// Sets an attribute on every node of one op type before compiling: how run-wide
// choices reach the ops without the engine knowing them (engine_bench
// --deconv_method col2im becomes {"ConvTranspose", "method", "col2im"}).
struct AttributeOverride {
  std::string op_type, attribute;
  AttrValue value;
};

struct CompileOptions {
  int num_threads = 1;
  std::vector<AttributeOverride> attribute_overrides;
  PassOptions passes;
  // Every tensor, and the constants plus one session's activation arena, must fit:
  // checked at compile time, before any session allocates (graph/memory_limit.h).
  int64_t max_memory = default_max_memory();
  // Sessions check every run for NaN and infinities (Session::set_check_numerics).
  bool check_numerics = false;
};

// Where a tensor lives: in the activation arena, or in the graph's constant data.
struct ValueSlot {
  std::string name;
  Shape shape;
  const float* constant = nullptr;  // set for initializers
  int64_t offset = -1;              // byte offset in the arena otherwise
};

// One buffer of the activation arena: a tensor, or a step's workspace.
struct PlannedBuffer {
  std::string name;                  // the first tensor, or "<step name>:workspace"
  std::vector<std::string> tensors;  // all tensors sharing it (element-wise ops in place)
  int64_t offset = 0, bytes = 0;
  int first_step = 0, last_step = 0;
};

struct Step {
  std::string name;  // the node's name
  nlohmann::json details;  // op-specific facts for the report (Op::details)
  std::string op_type;
  std::string kind;  // the op's finer class, e.g. depthwise; may be empty
  std::unique_ptr<Op> op;
  std::vector<int> inputs;  // value slots; -1 for an omitted optional input
  std::vector<int> outputs;  // value slots; -1 for an omitted optional output
  Cost cost;
  int64_t workspace_bytes = 0;
  int64_t workspace_offset = 0;
};

class CompiledModel {
 public:
  CompiledModel(Graph graph, CompileOptions options);

  const Graph& graph() const { return graph_; }
  const CompileOptions& options() const { return options_; }
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<ValueSlot>& values() const { return values_; }
  const std::vector<int>& input_values() const { return inputs_; }
  const std::vector<int>& output_values() const { return outputs_; }
  // Throws UsageError for an unknown name.
  int value_index(const std::string& name) const;
  int64_t arena_bytes() const { return arena_bytes_; }
  // Every arena buffer with its place and lifetime, in planning order.
  const std::vector<PlannedBuffer>& buffers() const { return buffers_; }
  // Activation bytes if every tensor and workspace had its own buffer.
  int64_t naive_activation_bytes() const { return naive_bytes_; }
  // The most bytes of buffers alive at one step: no plan of these buffers can be smaller.
  int64_t lower_bound_bytes() const { return lower_bound_bytes_; }
  Cost total_cost() const;

  // What the graph passes did, and the cost of the graph as loaded, before them.
  const std::vector<PassLog>& pass_logs() const { return pass_logs_; }
  const Cost& cost_before_passes() const { return cost_before_passes_; }
  // The as-loaded cost of the named original nodes (those a pass action lists).
  Cost original_cost(const std::vector<std::string>& node_names) const;
  // The step a node ended up in (its own, or the merged one), or -1 if removed.
  int step_index(const std::string& step_name) const;

 private:
  void apply_passes();
  void check_tensor_sizes(const std::map<std::string, Shape>& shapes) const;
  void build_steps();
  void plan_memory_layout();
  void check_memory_limit() const;

  Graph graph_;
  CompileOptions options_;
  std::vector<Step> steps_;
  std::vector<ValueSlot> values_;
  std::vector<int> inputs_, outputs_;
  std::vector<PassLog> pass_logs_;
  std::map<std::string, Cost> original_costs_;
  Cost cost_before_passes_;
  std::vector<PlannedBuffer> buffers_;
  int64_t arena_bytes_ = 0;
  int64_t naive_bytes_ = 0;
  int64_t lower_bound_bytes_ = 0;
};

// Validates, infers shapes and plans; throws ModelError.
std::shared_ptr<const CompiledModel> compile(Graph graph, const CompileOptions& options = {});

// Loads the model file (load_model, within options.max_memory, with `input_shapes`
// replacing the declared ones) and compiles it: what the tools and the Python module do
// with a path.
std::shared_ptr<const CompiledModel> compile_file(const std::string& path, const CompileOptions& options = {},
                                                  const std::map<std::string, Shape>& input_shapes = {});

}  // namespace minfer
