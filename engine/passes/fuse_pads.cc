#include "engine/passes/fuse_pads.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/passes/tensor_uses.h"
#include "ops/window.h"

namespace minfer {
namespace {

// +0 only: a Conv's own padding adds +0 products, where -0 ones could turn a -0 sum's sign.
bool positive_zero(double v) {
  return v == 0.0 && !std::signbit(v);
}

// The spatial pads of a Pad node, ONNX's order (every axis's begin, then every end) less
// the first two axes, when it pads with zeros on those axes alone; else nothing.
std::optional<std::vector<int64_t>> spatial_zero_pads(const CompileGraph& g, const Node& pad) {
  if (pad.attrs.get_string("mode", "constant") != "constant" || !positive_zero(pad.attrs.get_data_float("value", 0.0)))
    return std::nullopt;
  if (pad.inputs.size() > 3 && !pad.inputs[3].empty()) return std::nullopt;  // axes
  if (pad.inputs.size() > 2 && !pad.inputs[2].empty()) {
    const std::optional<float> value = scalar_constant(g, pad.inputs[2]);
    if (!value || !positive_zero(*value)) return std::nullopt;
  }
  std::vector<int64_t> pads = pad.attrs.get_ints("pads");
  if (pad.inputs.size() > 1 && !pad.inputs[1].empty()) {
    const Tensor* t = g.constant(pad.inputs[1]);
    if (!t || t->dtype() != DType::kInt64) return std::nullopt;
    const auto v = t->values<int64_t>();
    pads.assign(v.begin(), v.end());
  }
  const size_t rank = g.type(pad.inputs[0]).shape.size();
  if (rank < 3 || pads.size() != 2 * rank) return std::nullopt;
  if (pads[0] || pads[1] || pads[rank] || pads[rank + 1]) return std::nullopt;
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) return std::nullopt;
  std::vector<int64_t> spatial(pads.begin() + 2, pads.begin() + static_cast<std::ptrdiff_t>(rank));
  spatial.insert(spatial.end(), pads.begin() + static_cast<std::ptrdiff_t>(rank) + 2, pads.end());
  return spatial;
}

// The node's own pads with `more` added, when it can take them.
std::optional<std::vector<int64_t>> merged_pads(const Node& reader, const std::vector<int64_t>& more) {
  const std::string auto_pad = reader.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET") return std::nullopt;
  std::vector<int64_t> own = reader.attrs.get_ints("pads", std::vector<int64_t>(more.size(), 0));
  if (own.size() != more.size()) return std::nullopt;
  const bool pads_itself = std::any_of(own.begin(), own.end(), [](int64_t p) { return p != 0; });
  if (reader.op_type == "AveragePool" && pads_itself && reader.attrs.get_int("count_include_pad", 0) == 0)
    return std::nullopt;
  for (size_t i = 0; i < own.size(); ++i) own[i] += more[i];
  // A pool refuses pads as wide as its window (windows of padding alone), which a Pad
  // wider than the window would make.
  if (reader.op_type == "AveragePool") {
    const std::vector<int64_t> kernel = reader.attrs.get_ints("kernel_shape");
    for (size_t i = 0; i < own.size(); ++i)
      if (kernel.size() * 2 != own.size() || own[i] >= kernel[i % kernel.size()]) return std::nullopt;
  }
  return own;
}

// Whether the reader's output keeps its size with the Pad's pads as its own. It does,
// except in ceil mode: a last window that starts in the reader's own end padding is
// dropped, one that starts in the Pad's is not (PyTorch 1.13 exports AvgPool2d(padding,
// ceil_mode=True) as such a Pad; the ONNX file's own shapes then have that window's row).
bool same_output_size(const Shape& input, const Node& reader, const std::vector<int64_t>& own,
                      const std::vector<int64_t>& merged) {
  const WindowAttrs w = parse_window_attrs(reader.attrs);
  if (!w.ceil_mode) return true;
  const size_t axes = own.size() / 2;
  if (input.size() != axes + 2 || w.kernel_shape.size() != axes) return false;
  for (size_t a = 0; a < axes; ++a) {
    const int64_t in = input[a + 2], k = w.kernel_shape[a];
    const int64_t s = a < w.strides.size() ? w.strides[a] : 1, d = a < w.dilations.size() ? w.dilations[a] : 1;
    const int64_t padded = in + merged[a] - own[a] + merged[a + axes] - own[a + axes];
    if (window_output_size(padded, k, s, d, own[a], own[a + axes], true) !=
        window_output_size(in, k, s, d, merged[a], merged[a + axes], true))
      return false;
  }
  return true;
}

}  // namespace

PassLog fuse_pads(CompileGraph& g) {
  PassLog log{"fuse_pads", {}};
  const TensorUses uses(g);
  std::vector<bool> removed(g.size(), false);
  for (size_t i = 0; i < g.size(); ++i) {
    const Node pad = g.node(i);
    if (pad.op_type != "Pad" || pad.outputs.size() != 1 || pad.inputs.empty()) continue;
    const std::string& t = pad.outputs[0];
    std::optional<size_t> r = uses.only_reader_of_type(g, t, "Conv");
    if (!r) r = uses.only_reader_of_type(g, t, "AveragePool");
    if (!r || g.node(*r).inputs.empty() || g.node(*r).inputs[0] != t) continue;
    const std::optional<std::vector<int64_t>> more = spatial_zero_pads(g, pad);
    if (!more) continue;
    const Node reader = g.node(*r);
    const std::optional<std::vector<int64_t>> pads = merged_pads(reader, *more);
    if (!pads) continue;
    const std::vector<int64_t> own = reader.attrs.get_ints("pads", std::vector<int64_t>(more->size(), 0));
    if (!same_output_size(g.type(pad.inputs[0]).shape, reader, own, *pads)) continue;
    Cost before = g.cost(i);
    before += g.cost(*r);
    Attributes attrs = reader.attrs;
    attrs.set("pads", *pads);
    if (reader.op_type == "AveragePool") attrs.set("count_include_pad", int64_t{1});
    std::vector<std::string> inputs = reader.inputs;
    inputs[0] = pad.inputs[0];
    const std::string merged = pad.name + "+" + reader.name;
    g.set_inputs(*r, std::move(inputs));
    g.set_attributes(*r, std::move(attrs));
    g.set_name(*r, merged);
    removed[i] = true;
    log.actions.push_back({"fused", {pad.name, reader.name}, merged, "", before, g.cost(*r), pad.op_type});
  }
  g.remove_nodes(removed);
  return log;
}

}  // namespace minfer
