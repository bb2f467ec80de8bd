#include "engine/session.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace minfer {

Session::Session(std::shared_ptr<const CompiledModel> model)
    : model_(std::move(model)), arena_(model_->arena_bytes()), check_numerics_(model_->options().check_numerics) {
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
    throw UsageError(node_context(model_->graph(), model_->graph().nodes[s.node]) + ": " + e.what());
  }
}

namespace {

// The index of the first NaN or infinity, or -1.
int64_t first_non_finite(std::span<const float> values) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) return static_cast<int64_t>(i);
  return -1;
}

std::string describe(float value) {
  return std::isnan(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf";
}

}  // namespace

void Session::check_sources() const {
  const CompiledModel& m = *model_;
  for (int v : m.input_values()) {
    const int64_t i = first_non_finite(value_data(v));
    if (i >= 0)
      throw NumericsError(fmt::format("{}: input '{}' already holds {} at index {} of {}, before any op runs",
                                      m.graph().source, m.values()[v].name, describe(value_data(v)[i]), i,
                                      shape_str(m.values()[v].shape)));
  }
  for (const auto& [name, tensor] : m.graph().initializers) {
    const int64_t i = first_non_finite(tensor.data);
    if (i >= 0)
      throw NumericsError(fmt::format("{}: initializer '{}' holds {} at index {} of {}", m.graph().source, name,
                                      describe(tensor.data[i]), i, shape_str(tensor.shape)));
  }
}

void Session::check_step_outputs(size_t index) const {
  const Step& s = model_->steps()[index];
  for (int v : s.outputs) {
    if (v < 0) continue;
    const int64_t i = first_non_finite(value_data(v));
    if (i >= 0)
      throw NumericsError(fmt::format("{}: output '{}' holds {} at index {} of {}; every input of the op was finite",
                                      node_context(model_->graph(), model_->graph().nodes[s.node]),
                                      model_->values()[v].name, describe(value_data(v)[i]), i,
                                      shape_str(model_->values()[v].shape)));
  }
}

void Session::run() {
  const std::vector<Step>& steps = model_->steps();
  const RunContext ctx{model_->options().num_threads};
  if (check_numerics_) check_sources();
  if (!profiling_) {
    for (size_t i = 0; i < steps.size(); ++i) {
      run_step(i, ctx);
      if (check_numerics_) check_step_outputs(i);
    }
    return;
  }
  RunTimes& times = profile_.begin_run(steps.size());
  Clock::time_point t0 = times.start;
  for (size_t i = 0; i < steps.size(); ++i) {
    times.step_start_ms[i] = elapsed_ms(times.start, t0);
    run_step(i, ctx);
    Clock::time_point t1 = Clock::now();
    times.step_ms[i] = elapsed_ms(t0, t1);
    if (check_numerics_) {
      check_step_outputs(i);  // not timed
      t1 = Clock::now();
    }
    t0 = t1;
  }
  profile_.end_run(elapsed_ms(times.start, t0));
}

}  // namespace minfer
