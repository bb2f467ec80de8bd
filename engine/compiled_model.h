// A graph compiled into an execution plan: one bound kernel per step with its cost, the
// values and where they live, and the memory plan. Immutable once built, so one
// CompiledModel serves any number of Sessions, also concurrently.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/passes/pipeline.h"
#include "graph/graph.h"
#include "graph/memory_limit.h"
#include "ops/op.h"
#include "profiler/buffer_span.h"
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

// Where a value lives: in the activation arena, or in the graph's constant data.
struct ValueSlot {
  std::string name;
  TensorType type;
  const Tensor* constant = nullptr;  // set for constants
  int64_t offset = -1;               // byte offset in the arena otherwise
};

struct Step {
  std::string name;  // the node's name
  std::string op_type;
  std::shared_ptr<const Op> op;
  std::unique_ptr<const Kernel> kernel;
  OpCost cost;
  std::vector<int> inputs;   // value slots; -1 for an omitted optional input
  std::vector<int> outputs;  // value slots; -1 for an omitted optional output
  int64_t workspace_offset = 0;
  // Bytes of inputs the memory plan placed inside the output, where the op finds them
  // without a copy (a Concat's: KernelFacts::input_offsets).
  int64_t bytes_in_place = 0;

  const KernelFacts& facts() const { return kernel->facts(); }
  // The label the report shows after the op type: the op's class, else its method.
  const std::string& kind() const { return facts().op_class.empty() ? facts().method : facts().op_class; }
};

// What one graph pass did, each action costed from the graph at that moment: the nodes
// it names in the graph just before the pass, its result in the graph just after it
// (nothing for a removed node). So each pass's changes add up to its effect on the
// model's cost, whatever later passes do with its results.
struct PassResult {
  PassLog log;
  std::vector<Cost> cost_before, cost_after;  // one per action of log
};

class CompiledModel {
 public:
  // load_ms: how long reading the graph from its file took (0 for a graph built in memory).
  CompiledModel(Graph graph, CompileOptions options, double load_ms = 0);

  // The graph as compiled: folded, rewritten by the passes, nodes in execution order.
  const Graph& graph() const { return graph_; }
  const CompileOptions& options() const { return options_; }
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<ValueSlot>& values() const { return values_; }
  const std::vector<int>& input_values() const { return inputs_; }
  const std::vector<int>& output_values() const { return outputs_; }
  // Throws UsageError for an unknown name.
  int value_index(const std::string& name) const;
  int64_t arena_bytes() const { return arena_bytes_; }
  // The arena's thread-kept scratch (Workspace::threads()): one piece per thread of
  // options().num_threads, each the most any step's kernel needs, alive through the run.
  ThreadScratch thread_scratch(std::byte* arena) const {
    return {arena + thread_scratch_offset_, options_.num_threads, thread_scratch_bytes_};
  }
  // How long loading took (compile_file) and the constructor: inference, folding,
  // passes, binding and planning.
  double load_ms() const { return load_ms_; }
  double compile_ms() const { return compile_ms_; }
  // Every arena buffer with its place and lifetime, in planning order.
  const std::vector<BufferSpan>& buffers() const { return buffers_; }
  // Activation bytes if every tensor and workspace had its own buffer.
  int64_t naive_activation_bytes() const { return naive_bytes_; }
  // The most bytes of buffers alive at one step: no plan of these buffers can be smaller.
  int64_t lower_bound_bytes() const { return lower_bound_bytes_; }
  Cost total_cost() const;

  // What the graph passes did, and the cost of the graph before them (after folding).
  const std::vector<PassLog>& pass_logs() const { return pass_logs_; }
  const Cost& cost_before_passes() const { return cost_before_passes_; }
  // The step of that name, or -1.
  int step_index(const std::string& step_name) const;
  // How many ops compile() built: one per node, and one more for each node a pass
  // rewrote (the counting test).
  int64_t ops_built() const { return ops_built_; }

 private:
  void bind_steps(const CompileGraph& graph);
  void plan_memory_layout();
  void check_memory_limit() const;

  Graph graph_;
  CompileOptions options_;
  std::vector<Step> steps_;
  std::vector<ValueSlot> values_;
  std::unordered_map<std::string, int> value_of_;
  std::vector<int> inputs_, outputs_;
  std::vector<PassLog> pass_logs_;
  std::unordered_map<std::string, int> step_of_;  // by name
  Cost cost_before_passes_;
  std::vector<BufferSpan> buffers_;
  int64_t arena_bytes_ = 0;
  int64_t thread_scratch_offset_ = 0, thread_scratch_bytes_ = 0;
  int64_t naive_bytes_ = 0;
  int64_t lower_bound_bytes_ = 0;
  int64_t ops_built_ = 0;
  double load_ms_ = 0, compile_ms_ = 0;
};

// Validates, infers types, folds, rewrites, binds and plans; throws ModelError.
std::shared_ptr<const CompiledModel> compile(Graph graph, const CompileOptions& options = {});

// The graph with its constant subgraphs folded and older opsets upgraded, and every
// graph output's type: what engine_convert writes.
struct FoldedGraph {
  Graph graph;
  std::map<std::string, TensorType> output_types;
};
FoldedGraph fold_graph(Graph graph, int64_t max_memory = default_max_memory());

// Loads the model file (load_model, within options.max_memory, with `input_shapes`
// replacing the declared ones) and compiles it: what the tools and the Python module do
// with a path.
std::shared_ptr<const CompiledModel> compile_file(const std::string& path, const CompileOptions& options = {},
                                                  const std::map<std::string, Shape>& input_shapes = {});

}  // namespace minfer
