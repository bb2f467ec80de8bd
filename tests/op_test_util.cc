#include "tests/op_test_util.h"

#include <fmt/format.h>

#include <cmath>
#include <numeric>

namespace minfer::test {

std::vector<float> random_values(int64_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<float> iota_values(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

Graph single_op_graph(const std::string& op_type, const std::vector<TestTensor>& inputs, Attributes attrs,
                      int num_outputs) {
  Graph g;
  g.name = "test_" + op_type;
  g.source = "<test>";
  Node node{"node", op_type, {}, {}, std::move(attrs)};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TestTensor& t = inputs[i];
    if (t.shape.empty() && t.data.empty()) {
      node.inputs.push_back("");
      continue;
    }
    const std::string name = fmt::format("in{}", i);
    node.inputs.push_back(name);
    if (t.constant)
      g.initializers[name] = Tensor(t.shape, t.data);
    else
      g.inputs.push_back({name, t.shape});
  }
  for (int i = 0; i < num_outputs; ++i) {
    node.outputs.push_back(fmt::format("out{}", i));
    g.outputs.push_back(node.outputs.back());
  }
  g.nodes.push_back(std::move(node));
  return g;
}

std::string compile_error(const std::string& op_type, const std::vector<TestTensor>& inputs, Attributes attrs,
                          int num_outputs) {
  try {
    compile(single_op_graph(op_type, inputs, std::move(attrs), num_outputs));
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

OpResult run_op(const std::string& op_type, const std::vector<TestTensor>& inputs, Attributes attrs, int num_outputs,
                int threads) {
  CompileOptions options;
  options.num_threads = threads;
  auto model = compile(single_op_graph(op_type, inputs, std::move(attrs), num_outputs), options);
  Session s(model);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].constant && !inputs[i].data.empty()) s.set_input(fmt::format("in{}", i), inputs[i].data);
  s.run();
  OpResult r;
  for (int i = 0; i < num_outputs; ++i) {
    const std::string name = fmt::format("out{}", i);
    auto out = s.output(name);
    r.outputs.emplace_back(out.begin(), out.end());
    r.shapes.push_back(s.shape(name));
  }
  r.cost = model->steps()[0].cost;
  r.kind = model->steps()[0].kind();
  r.details = model->steps()[0].facts().details;
  return r;
}

OpResult cost_of(const std::string& op_type, const std::vector<TestTensor>& inputs, Attributes attrs, int num_outputs) {
  auto model = compile(single_op_graph(op_type, inputs, std::move(attrs), num_outputs));
  OpResult r;
  r.cost = model->steps()[0].cost;
  r.kind = model->steps()[0].kind();
  r.details = model->steps()[0].facts().details;
  r.shapes.push_back(model->values()[model->steps()[0].outputs[0]].type.shape);
  return r;
}

std::vector<float> reorder_nchwc(const std::vector<float>& x, int64_t batch, int64_t channels, int64_t pixels,
                                 int64_t c, bool to_blocked) {
  std::vector<float> y(x.size());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t ch = 0; ch < channels; ++ch)
      for (int64_t p = 0; p < pixels; ++p) {
        const int64_t nchw = (n * channels + ch) * pixels + p,
                      nchwc = (n * channels + ch / c * c) * pixels + p * c + ch % c;
        y[static_cast<size_t>(to_blocked ? nchwc : nchw)] = x[static_cast<size_t>(to_blocked ? nchw : nchwc)];
      }
  return y;
}

double max_rel_error(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - double(b[i])) / (1.0 + std::fabs(double(b[i])));
    if (!(d <= worst)) worst = d;  // NaN propagates as the worst
  }
  return worst;
}

}  // namespace minfer::test
