// One CompiledModel run from many threads at once, each with its own Session: every
// thread's outputs must equal, bit for bit, those of the same inputs run alone. Each
// thread feeds different inputs, so a session reading another's arena, or an op writing
// to state it shares (packed weights, scratch), shows up as a mismatch. The sanitizer
// build runs this under AddressSanitizer; ThreadSanitizer is not used because the
// OpenMP runtime the ops call into is not instrumented and would report its own
// synchronisation as races.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "engine/engine.h"

namespace minfer {
namespace {

const std::string kModels = std::string(MINFER_SOURCE_DIR) + "/models/";
constexpr int kThreads = 8;
constexpr int kRunsPerThread = 2;

using Outputs = std::vector<std::vector<float>>;

// Inputs of `seed`, in [-1, 1).
void fill_inputs(Session& session, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int v : session.model().input_values())
    for (float& x : session.input(session.model().values()[v].name)) x = dist(rng);
}

Outputs run_once(Session& session, uint64_t seed) {
  fill_inputs(session, seed);
  session.run();
  Outputs out;
  for (int v : session.model().output_values()) {
    auto data = session.output(session.model().values()[v].name);
    out.emplace_back(data.begin(), data.end());
  }
  return out;
}

bool bitwise_equal(const Outputs& a, const Outputs& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
      return false;
  return true;
}

struct Case {
  std::string model;
  std::string input_shape;  // smaller than the model's own, to keep the sanitizer build quick
  int op_threads;           // CompileOptions::num_threads: OpenMP teams inside each session
};

class ConcurrentSessions : public ::testing::TestWithParam<Case> {};

TEST_P(ConcurrentSessions, ThreadsWithOwnSessionsMatchSequentialRuns) {
  const Case& c = GetParam();
  LoadOptions load;
  if (!c.input_shape.empty()) load.input_shapes = parse_input_shapes(c.input_shape);
  CompileOptions options;
  options.num_threads = c.op_threads;
  const std::shared_ptr<const CompiledModel> model = compile(load_model(kModels + c.model, load), options);

  std::vector<Outputs> expected(kThreads);
  {
    Session alone(model);
    for (int t = 0; t < kThreads; ++t) expected[t] = run_once(alone, t + 1);
  }
  // The test must be able to fail: different seeds give different outputs.
  ASSERT_FALSE(bitwise_equal(expected[0], expected[1]));

  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        Session session(model);
        for (int r = 0; r < kRunsPerThread; ++r)
          if (!bitwise_equal(run_once(session, t + 1), expected[t])) ++mismatches[t];
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    EXPECT_EQ(mismatches[t], 0) << "thread " << t << " differed from its sequential run";
  }
}

INSTANTIATE_TEST_SUITE_P(BundledModels, ConcurrentSessions,
                         ::testing::Values(Case{"small_cnn.json", "", 1}, Case{"small_cnn.json", "", 2},
                                           Case{"lstm.json", "", 1}, Case{"digits_cnn.json", "", 1},
                                           Case{"mobilenet_v1.json", "input:1,3,32,32", 2},
                                           Case{"mobilenet_v2_1_0.json", "input:1,3,32,32", 1}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.model.substr(0, info.param.model.find('.')) + "_" +
                                  std::to_string(info.param.op_threads) + "_op_threads";
                         });

}  // namespace
}  // namespace minfer
