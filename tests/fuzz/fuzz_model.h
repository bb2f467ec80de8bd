// What the model fuzzers do with a graph a loader accepted: compile it under the
// fuzzers' memory limit and, when it is small enough to run quickly, run it on
// deterministic inputs. Refusals (ModelError, UsageError, NumericsError) are the
// expected outcome of most inputs; any other exception escapes and is a finding.
#pragma once

#include <cstdint>

#include "engine/engine.h"

namespace minfer::fuzz {

// Small enough that libFuzzer's default 2 GiB RSS limit is never the one that fires:
// what passes this is refused by the engine with a one-line error, as a user sees it.
inline constexpr int64_t kMaxMemory = int64_t{256} << 20;

// Runs only what takes a few milliseconds, so a second of fuzzing tries many inputs.
inline constexpr int64_t kMaxMacsToRun = 4'000'000;

inline void compile_and_run(Graph graph) {
  CompileOptions options;
  options.max_memory = kMaxMemory;
  options.check_numerics = true;  // exercises the checker; a NaN is a refusal like any other
  const auto model = compile(std::move(graph), options);
  if (model->total_cost().macs > kMaxMacsToRun) return;
  Session session(model);
  session.set_profiling(false);
  for (int v : model->input_values()) {
    uint32_t state = 12345;
    for (float& x : session.input(model->values()[v].name)) {
      state = state * 1664525u + 1013904223u;
      x = static_cast<float>(state >> 8) * 0x1.0p-24f - 0.5f;
    }
  }
  session.run();
}

// Calls `body`, swallowing the engine's refusals.
template <typename Fn>
void refusals_are_fine(Fn&& body) {
  try {
    body();
  } catch (const ModelError&) {
  } catch (const UsageError&) {
  } catch (const NumericsError&) {
  }
}

}  // namespace minfer::fuzz
