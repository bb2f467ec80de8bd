#include "engine/session.h"

#include <algorithm>

#include <fmt/format.h>

namespace minfer {

Session::Session(std::shared_ptr<const CompiledModel> model)
    : model_(std::move(model)), arena_(model_->arena_bytes()) {
  auto view = [&](int v) {
    if (v < 0) return TensorView{};  // omitted optional input or output
    return TensorView{value_data(v).data(), model_->values()[v].shape};
  };
  for (const Step& step : model_->steps()) {
    std::vector<TensorView> in, out;
    for (int v : step.inputs) in.push_back(view(v));
    for (int v : step.outputs) out.push_back(view(v));
    step_inputs_.push_back(std::move(in));
    step_outputs_.push_back(std::move(out));
  }
}

std::span<float> Session::value_data(int v) const {
  const ValueSlot& slot = model_->values()[v];
  const size_t n = static_cast<size_t>(num_elements(slot.shape));
  // Constants are never written: ops do not write their inputs, and the planner
  // never lets an output share a constant's storage.
  if (slot.constant) return {const_cast<float*>(slot.constant), n};
  return {reinterpret_cast<float*>(arena_.data() + slot.offset), n};
}

int Session::graph_input(const std::string& name) const {
  for (int v : model_->input_values())
    if (model_->values()[v].name == name) return v;
  throw UsageError(fmt::format("{}: '{}' is not a graph input", model_->graph().source, name));
}

void Session::set_input(const std::string& name, std::span<const float> data) {
  std::span<float> dst = input(name);
  if (data.size() != dst.size())
    throw UsageError(fmt::format("{}: input '{}' needs {} values ({}), got {}", model_->graph().source, name,
                                 dst.size(), shape_str(shape(name)), data.size()));
  std::copy(data.begin(), data.end(), dst.begin());
}

std::span<float> Session::input(const std::string& name) { return value_data(graph_input(name)); }

std::span<const float> Session::output(const std::string& name) const { return value_data(model_->value_index(name)); }

const Shape& Session::shape(const std::string& name) const { return model_->values()[model_->value_index(name)].shape; }

void Session::run_step(size_t index, const RunContext& ctx) {
  const Step& s = model_->steps()[index];
  const std::span<float> workspace(reinterpret_cast<float*>(arena_.data() + s.workspace_offset),
                                   static_cast<size_t>(s.workspace_bytes / 4));
  try {
    s.op->run(ctx, step_inputs_[index], step_outputs_[index], workspace);
  } catch (const OpError& e) {
    // Only data known at run time gets here (e.g. an LSTM's sequence_lens fed as an input).
    throw UsageError(node_context(model_->graph(), *model_->graph().find_node(s.name)) + ": " + e.what());
  }
}

void Session::run() {
  const std::vector<Step>& steps = model_->steps();
  const RunContext ctx{model_->options().num_threads};
  if (!profiling_) {
    for (size_t i = 0; i < steps.size(); ++i) run_step(i, ctx);
    return;
  }
  RunTimes& times = profile_.begin_run(steps.size());
  Clock::time_point t0 = times.start;
  for (size_t i = 0; i < steps.size(); ++i) {
    times.step_start_ms[i] = elapsed_ms(times.start, t0);
    run_step(i, ctx);
    const Clock::time_point t1 = Clock::now();
    times.step_ms[i] = elapsed_ms(t0, t1);
    t0 = t1;
  }
  profile_.end_run(elapsed_ms(times.start, t0));
}

}  // namespace minfer
