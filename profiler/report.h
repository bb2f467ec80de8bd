// The profile report. build_report joins analytic costs with measured times into one
// JSON document; the text and CSV writers only render that document, so every number
// a user sees in any format comes from the same place.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "graph/shape.h"
#include "profiler/buffer_span.h"
#include "profiler/cost.h"
#include "profiler/machine_model.h"

namespace minfer {

struct OpRecord {
  std::string name, type, kind;
  Shape output_shape;
  OpCost cost;                   // its MACs and FLOPs equal to their formulas' values (build_report checks)
  std::vector<double> times_ms;  // one per profiled run
  nlohmann::json details = nlohmann::json::object();  // the kernel's own facts
  // Of cost's bytes read and written each: inputs the memory plan placed where the op
  // would copy them (a Concat's, written there by their producers), so it moves none of
  // them. Its attained GB/s and roofline count the bytes it moves.
  int64_t bytes_in_place = 0;
};

struct NamedShape {
  std::string name;
  Shape shape;
};

// One action of a graph pass, with the cost of its nodes in the graph just before that
// pass and of its result just after it.
struct PassRecord {
  std::string pass, action;
  std::vector<std::string> nodes;
  std::string result, reason;
  Cost before, after;
  int step = -1;        // the op (index into ReportInput::ops) that is the result, or -1
  std::string op_type;  // of the node acted on: the one folded, fused, removed or kept
};

// A depthwise Conv feeding a pointwise Conv (possibly through BatchNormalization and
// activations), next to the regular convolution it stands in for (docs/cost-model.md).
struct SeparablePairRecord {
  std::string depthwise, pointwise;
  std::vector<std::string> through;  // the nodes between them
  std::vector<int64_t> kernel;       // the depthwise kernel's spatial shape
  int64_t in_channels = 0, out_channels = 0;
  int64_t depthwise_macs = 0, pointwise_macs = 0;
  int64_t regular_macs = 0;  // kernel x in_channels x output positions x out_channels
};

struct ReportInput {
  std::string model_name, model_file;
  std::vector<NamedShape> inputs, outputs;
  int threads = 1;
  std::string kernel_isa;  // the target every kernel ran (isa_name of active_isa())
  int warmup_runs = 0;
  int64_t peak_activation_bytes = 0;
  int64_t naive_activation_bytes = 0;
  int64_t lower_bound_bytes = 0;
  std::vector<double> latency_ms;  // one per profiled run
  // One per run without per-op timing, interleaved with the profiled runs (may be empty).
  std::vector<double> latency_unprofiled_ms;
  double load_ms = 0, compile_ms = 0;  // reading the model file, compiling the graph
  // The 1-minute load average just after the runs (-1: unknown) and the logical CPUs:
  // with the runs' spread, whether the machine was busy (the report's `stability`).
  double load_average = -1;
  int logical_cpus = 0;
  std::vector<OpRecord> ops;            // in execution order
  std::vector<BufferSpan> buffers;      // the activation arena's plan
  std::vector<std::string> passes_run;  // every pass that ran, in order
  std::vector<PassRecord> passes;       // their actions, in order
  Cost cost_before_passes;
  std::vector<SeparablePairRecord> separable_pairs;
  // The machine the roofline is drawn for; without it the report has attained
  // throughput but no roofline figures.
  std::optional<MachineModel> machine;
};

// Throws std::logic_error when an op's MACs or FLOPs differ from their formula's value.
nlohmann::json build_report(const ReportInput& input);

struct TextOptions {
  bool explain = false;  // each op's cost formulas (MACs and FLOPs, symbolic and substituted)
  bool verbose = false;  // every action of every graph pass, not only one line per pass
};
std::string format_text(const nlohmann::json& report, const TextOptions& options = {});
std::string format_csv(const nlohmann::json& report);
std::string format_memory_plan(const nlohmann::json& report);
// A cost object of the report (macs, flops, params, bytes_read, bytes_written) in one line.
std::string cost_line(const nlohmann::json& cost);
// One line per graph pass (passes.by_pass): the nodes it took and its net change of cost,
// e.g. "fold_bn: 27 BatchNormalizations folded: -10,085,376 FLOPs, ...".
std::vector<std::string> pass_summary_lines(const nlohmann::json& by_pass);
// The report's `stability` in one line; and, when the machine was busy, why (else "").
std::string stability_summary(const nlohmann::json& stability);
std::string busy_warning(const nlohmann::json& stability);

// An op's type with its kind: "Conv/depthwise", or "Relu" when it has none.
std::string op_label(const nlohmann::json& op);
// A report's shape array as "1x3x224x224".
std::string shape_text(const nlohmann::json& shape);
// 568740352 -> "568,740,352"
std::string with_commas(int64_t value);
// 568740352 -> "568.74 M"
std::string si_units(double value);

}  // namespace minfer
