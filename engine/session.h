// One execution context for a CompiledModel: its own activation arena, tensor views
// and timing record. Sessions of one model may run concurrently on different threads.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/compiled_model.h"
#include "graph/aligned_buffer.h"
#include "profiler/run_profile.h"

namespace minfer {

class Session {
 public:
  explicit Session(std::shared_ptr<const CompiledModel> model);

  const CompiledModel& model() const { return *model_; }

  // Copies `data` into the named graph input; throws UsageError on a wrong name, type
  // or size.
  void set_input(const std::string& name, std::span<const float> data);
  void set_input(const std::string& name, std::span<const int64_t> data);
  void set_input(const std::string& name, std::span<const uint8_t> data);  // bool: 0 or 1
  // The named float32 graph input's buffer, to fill in place.
  std::span<float> input(const std::string& name);

  // Runs every step once. With profiling on (the default) each step is timed.
  void run();

  // A float32 value (a graph output, or any other tensor the plan keeps); throws
  // UsageError for another type.
  std::span<const float> output(const std::string& name) const;
  // Any value as its type and bytes.
  struct Value {
    TensorType type;
    const std::byte* data = nullptr;
  };
  Value value(const std::string& name) const;
  const Shape& shape(const std::string& name) const;

  void set_profiling(bool on) { profiling_ = on; }
  // With checking on (CompileOptions::check_numerics), run() scans the graph inputs and constants, then each step's
  // outputs, and throws NumericsError at the first NaN or infinity: it names the op that
  // produced it from finite inputs, or the input or constant that already held it.
  void set_check_numerics(bool on) { check_numerics_ = on; }
  const RunProfile& profile() const { return profile_; }
  void clear_profile() { profile_.clear(); }

 private:
  // Runs one step; an OpError about run-time data becomes a UsageError naming the node.
  void run_step(size_t index, const RunContext& ctx);
  void check_sources() const;
  void check_step_outputs(size_t index) const;
  const std::byte* value_bytes(int value) const;
  std::byte* input_bytes(const std::string& name, DType dtype, size_t count);

  std::shared_ptr<const CompiledModel> model_;
  AlignedBuffer arena_;
  bool check_numerics_;
  std::vector<std::vector<TensorView>> step_inputs_, step_outputs_;
  RunProfile profile_;
  bool profiling_ = true;
};

}  // namespace minfer
