#include "engine/profile_report.h"

#include <algorithm>

#include "engine/separable_pairs.h"
#include "profiler/cpu_info.h"
#include "profiler/isa.h"
#include "profiler/report.h"

namespace minfer {

nlohmann::json profile_report(const Session& session, int warmup_runs, const std::optional<MachineModel>& machine,
                              const std::vector<double>& unprofiled_ms) {
  const CompiledModel& m = session.model();
  const std::vector<ValueSlot>& values = m.values();
  ReportInput in;
  in.model_name = m.graph().name;
  in.model_file = m.graph().source;
  for (int v : m.input_values()) in.inputs.push_back({values[v].name, values[v].type.shape});
  for (int v : m.output_values()) in.outputs.push_back({values[v].name, values[v].type.shape});
  in.threads = m.options().num_threads;
  in.kernel_isa = isa_name(active_isa());
  in.warmup_runs = warmup_runs;
  in.peak_activation_bytes = m.arena_bytes();
  in.naive_activation_bytes = m.naive_activation_bytes();
  in.lower_bound_bytes = m.lower_bound_bytes();
  in.latency_ms = session.profile().total_ms();
  in.latency_unprofiled_ms = unprofiled_ms;
  in.load_ms = m.load_ms();
  in.compile_ms = m.compile_ms();
  in.load_average = load_average();
  in.logical_cpus = logical_cpus();
  in.machine = machine;
  for (size_t i = 0; i < m.steps().size(); ++i) {
    const Step& s = m.steps()[i];
    // The first output the node keeps (an LSTM may omit Y and keep Y_h).
    auto shown = std::find_if(s.outputs.begin(), s.outputs.end(), [](int v) { return v >= 0; });
    in.ops.push_back({s.name, s.op_type, s.kind(), shown == s.outputs.end() ? Shape{} : values[*shown].type.shape,
                      s.cost, session.profile().step_samples(i), s.facts().details, s.bytes_in_place});
  }
  in.buffers = m.buffers();
  in.cost_before_passes = m.cost_before_passes();
  for (const PassLog& log : m.pass_logs()) {
    in.passes_run.push_back(log.pass);
    for (const PassAction& a : log.actions)
      in.passes.push_back({log.pass, a.action, a.nodes, a.result, a.reason, a.before, a.after,
                           a.result.empty() ? -1 : m.step_index(a.result), a.op_type});
  }
  in.separable_pairs = find_separable_pairs(m);
  return build_report(in);
}

}  // namespace minfer
