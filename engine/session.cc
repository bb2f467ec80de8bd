#include "engine/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace minfer {

Session::Session(std::shared_ptr<const CompiledModel> model)
    : model_(std::move(model)), arena_(model_->arena_bytes()), check_numerics_(model_->options().check_numerics) {
  auto view = [&](int v) {
    if (v < 0) return TensorView{};  // omitted optional input or output
    // Kernels write only their outputs, which live in the arena: a constant's pointer
    // loses const only to share the one view type.
    return TensorView{const_cast<std::byte*>(value_bytes(v)), model_->values()[v].type};
  };
  for (const Step& step : model_->steps()) {
    std::vector<TensorView> in, out;
    for (int v : step.inputs) in.push_back(view(v));
    for (int v : step.outputs) out.push_back(view(v));
    step_inputs_.push_back(std::move(in));
    step_outputs_.push_back(std::move(out));
  }
}

const std::byte* Session::value_bytes(int v) const {
  const ValueSlot& slot = model_->values()[v];
  if (slot.constant) return slot.constant->data();
  return arena_.data() + slot.offset;
}

std::byte* Session::input_bytes(const std::string& name, DType dtype, size_t count) {
  const CompiledModel& m = *model_;
  for (int v : m.input_values()) {
    const ValueSlot& slot = m.values()[v];
    if (slot.name != name) continue;
    if (slot.type.dtype != dtype)
      throw UsageError(fmt::format("{}: input '{}' is {}, not {}", m.graph().source, name, dtype_name(slot.type.dtype),
                                   dtype_name(dtype)));
    const size_t n = static_cast<size_t>(num_elements(slot.type.shape));
    if (count != n && count != SIZE_MAX)
      throw UsageError(fmt::format("{}: input '{}' needs {} values ({}), got {}", m.graph().source, name, n,
                                   shape_str(slot.type.shape), count));
    return arena_.data() + slot.offset;
  }
  throw UsageError(fmt::format("{}: '{}' is not a graph input", m.graph().source, name));
}

void Session::set_input(const std::string& name, std::span<const float> data) {
  std::copy(data.begin(), data.end(), reinterpret_cast<float*>(input_bytes(name, DType::kFloat32, data.size())));
}

void Session::set_input(const std::string& name, std::span<const int64_t> data) {
  std::copy(data.begin(), data.end(), reinterpret_cast<int64_t*>(input_bytes(name, DType::kInt64, data.size())));
}

void Session::set_input(const std::string& name, std::span<const uint8_t> data) {
  uint8_t* out = reinterpret_cast<uint8_t*>(input_bytes(name, DType::kBool, data.size()));
  for (size_t i = 0; i < data.size(); ++i) out[i] = data[i] != 0;
}

std::span<float> Session::input(const std::string& name) {
  float* data = reinterpret_cast<float*>(input_bytes(name, DType::kFloat32, SIZE_MAX));
  return {data, static_cast<size_t>(num_elements(shape(name)))};
}

Session::Value Session::value(const std::string& name) const {
  const int v = model_->value_index(name);
  return {model_->values()[v].type, value_bytes(v)};
}

std::span<const float> Session::output(const std::string& name) const {
  const Value v = value(name);
  if (v.type.dtype != DType::kFloat32)
    throw UsageError(
        fmt::format("{}: '{}' is {}, not float32", model_->graph().source, name, dtype_name(v.type.dtype)));
  return {reinterpret_cast<const float*>(v.data), static_cast<size_t>(num_elements(v.type.shape))};
}

const Shape& Session::shape(const std::string& name) const {
  return model_->values()[model_->value_index(name)].type.shape;
}

void Session::run_step(size_t index, const RunContext& ctx) {
  const Step& s = model_->steps()[index];
  const Workspace workspace({arena_.data() + s.workspace_offset, static_cast<size_t>(s.facts().workspace_bytes)},
                            model_->thread_scratch(arena_.data()));
  try {
    s.kernel->run(ctx, step_inputs_[index], step_outputs_[index], workspace);
  } catch (const OpError& e) {
    // Only data known at run time gets here (e.g. an LSTM's sequence_lens fed as an input).
    throw UsageError(node_context(model_->graph(), model_->graph().nodes[index]) + ": " + e.what());
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

// Only float32 values can hold NaN or infinities.
void Session::check_sources() const {
  const CompiledModel& m = *model_;
  for (int v : m.input_values()) {
    const ValueSlot& slot = m.values()[v];
    if (slot.type.dtype != DType::kFloat32) continue;
    const std::span<const float> values = output(slot.name);
    const int64_t i = first_non_finite(values);
    if (i >= 0)
      throw NumericsError(fmt::format("{}: input '{}' already holds {} at index {} of {}, before any op runs",
                                      m.graph().source, slot.name, describe(values[i]), i, shape_str(slot.type.shape)));
  }
  for (const auto& [name, tensor] : m.graph().initializers) {
    if (tensor.dtype() != DType::kFloat32) continue;
    const int64_t i = first_non_finite(tensor.values<float>());
    if (i >= 0)
      throw NumericsError(fmt::format("{}: initializer '{}' holds {} at index {} of {}", m.graph().source, name,
                                      describe(tensor.values<float>()[i]), i, shape_str(tensor.shape())));
  }
}

void Session::check_step_outputs(size_t index) const {
  const Step& s = model_->steps()[index];
  for (int v : s.outputs) {
    if (v < 0) continue;
    const ValueSlot& slot = model_->values()[v];
    if (slot.type.dtype != DType::kFloat32) continue;
    const std::span<const float> values = output(slot.name);
    const int64_t i = first_non_finite(values);
    if (i >= 0)
      throw NumericsError(fmt::format("{}: output '{}' holds {} at index {} of {}; every input of the op was finite",
                                      node_context(model_->graph(), model_->graph().nodes[index]), slot.name,
                                      describe(values[i]), i, shape_str(slot.type.shape)));
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
