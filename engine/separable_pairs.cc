#include "engine/separable_pairs.h"

#include <functional>
#include <numeric>

namespace minfer {

namespace {

// What the pair may have between its parts: ops computing each element from its own
// (BatchNormalization, activations).
bool passes_through(const Step& step) {
  return step.op->traits().elementwise;
}

int64_t product(Shape::const_iterator begin, Shape::const_iterator end) {
  return std::accumulate(begin, end, int64_t{1}, std::multiplies<>());
}

}  // namespace

std::vector<SeparablePairRecord> find_separable_pairs(const CompiledModel& model) {
  const std::vector<Step>& steps = model.steps();
  const std::vector<ValueSlot>& values = model.values();
  std::vector<std::vector<int>> readers(values.size());
  for (size_t s = 0; s < steps.size(); ++s)
    for (int v : steps[s].inputs)
      if (v >= 0) readers[v].push_back(static_cast<int>(s));
  std::vector<bool> is_output(values.size(), false);
  for (int v : model.output_values()) is_output[v] = true;
  auto sole_reader = [&](int v) { return readers[v].size() == 1 && !is_output[v] ? readers[v][0] : -1; };

  std::vector<SeparablePairRecord> pairs;
  for (const Step& dw : steps) {
    if (dw.facts().op_class != "depthwise") continue;
    SeparablePairRecord p;
    int v = dw.outputs[0];
    for (int next = sole_reader(v); next >= 0 && steps[next].inputs[0] == v; next = sole_reader(v)) {
      const Step& s = steps[next];
      if (s.facts().op_class == "pointwise") {
        const Shape& x = values[dw.inputs[0]].type.shape;
        const Shape& w = values[dw.inputs[1]].type.shape;
        const Shape& y = values[s.outputs[0]].type.shape;
        p.depthwise = dw.name;
        p.pointwise = s.name;
        p.kernel.assign(w.begin() + 2, w.end());
        p.in_channels = x[1];
        p.out_channels = y[1];
        p.depthwise_macs = dw.cost.macs;
        p.pointwise_macs = s.cost.macs;
        p.regular_macs = y[0] * product(w.begin() + 2, w.end()) * x[1] * product(y.begin() + 2, y.end()) * y[1];
        pairs.push_back(std::move(p));
        break;
      }
      if (!passes_through(s)) break;
      p.through.push_back(s.name);
      v = s.outputs[0];
    }
  }
  return pairs;
}

}  // namespace minfer
