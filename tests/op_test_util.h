// Runs a single op through the whole engine (load-free graph -> compile -> session),
// so op tests exercise shape inference, cost, prepare and the kernel together.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace minfer::test {

struct TestTensor {
  Shape shape;
  std::vector<float> data;
  bool constant = false;  // becomes an initializer (a weight) instead of a graph input
};

inline TestTensor input(Shape shape, std::vector<float> data) {
  return {std::move(shape), std::move(data), false};
}
inline TestTensor weight(Shape shape, std::vector<float> data) {
  return {std::move(shape), std::move(data), true};
}

std::vector<float> random_values(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
// 0, 1, ..., n - 1: values that show where each element came from.
std::vector<float> iota_values(int64_t n);

// A one-node graph: inputs named in0, in1, ...; outputs out0, ...; an empty-shaped
// TestTensor with no data marks an omitted optional input.
Graph single_op_graph(const std::string& op_type, const std::vector<TestTensor>& inputs, Attributes attrs = {},
                      int num_outputs = 1);

struct OpResult {
  std::vector<std::vector<float>> outputs;
  std::vector<Shape> shapes;
  Cost cost;
  std::string kind;
  nlohmann::json details;
};

OpResult run_op(const std::string& op_type, const std::vector<TestTensor>& inputs, Attributes attrs = {},
                int num_outputs = 1, int threads = 1);

// Compiles without running: the cost and kind of the op on these inputs.
OpResult cost_of(const std::string& op_type, const std::vector<TestTensor>& inputs, Attributes attrs = {},
                 int num_outputs = 1);

// A float32 tensor's elements (throws for another type).
inline std::vector<float> float_values(const Tensor& t) {
  const auto v = t.values<float>();
  return {v.begin(), v.end()};
}

// The message compiling single_op_graph(...) is refused with (a ModelError), or "" when
// it compiles.
std::string compile_error(const std::string& op_type, const std::vector<TestTensor>& inputs, Attributes attrs = {},
                          int num_outputs = 1);

// NCHW [batch, channels, pixels] -> NCHWc [batch, channels / c, pixels, c] (channels a
// multiple of c) with to_blocked, else back; index by index.
std::vector<float> reorder_nchwc(const std::vector<float>& x, int64_t batch, int64_t channels, int64_t pixels,
                                 int64_t c, bool to_blocked);

// Max |a - b| / (1 + |b|) over equal-sized vectors.
double max_rel_error(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace minfer::test
