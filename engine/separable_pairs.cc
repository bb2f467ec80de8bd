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

// The channels of a convolution's input x: dimension 1, times the block's lanes when x
// is NCHWc [N, C / c, H, W, c] (ops/blocked_layout.h), one dimension more than the
// weights [C_out, C_in / group, kh, kw].
int64_t channels(const Shape& x, const Shape& weights) {
  return x.size() == weights.size() + 1 ? x[1] * x.back() : x[1];
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
        const Shape& w = values[dw.inputs[1]].type.shape;
        const Shape& pw = values[s.inputs[1]].type.shape;  // [C_out, C_in, 1, ...]
        p.depthwise = dw.name;
        p.pointwise = s.name;
        p.kernel.assign(w.begin() + 2, w.end());
        p.in_channels = channels(values[dw.inputs[0]].type.shape, w);
        p.out_channels = pw[0];
        p.depthwise_macs = dw.cost.macs;
        p.pointwise_macs = s.cost.macs;
        // The regular convolution: the window over the depthwise layer's input channels at
        // each of the 1x1 layer's output elements (its MACs / C_in).
        p.regular_macs = s.cost.macs / pw[1] * product(w.begin() + 2, w.end()) * p.in_channels;
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
