#include "engine/passes/crop_windows.h"

#include <fmt/format.h>

#include <optional>

#include "ops/window.h"

namespace minfer {
namespace {

// One spatial axis of a window: the taps [first, last] that read the input at some
// output position, and the pads of the window cropped to them.
struct AxisCrop {
  int64_t first, last, pad_begin, pad_end;
};

// The crop of one axis of `in` elements, k taps `dilation` apart, `stride`, `pad_begin`,
// `out` outputs; nullopt when every tap reads the input somewhere (or none does).
std::optional<AxisCrop> crop_axis(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t pad_begin,
                                  int64_t out) {
  // Tap t reads elements t * dilation - pad_begin + [0, (out - 1) * stride].
  const auto reads_input = [&](int64_t t) {
    const int64_t lo = t * dilation - pad_begin, hi = lo + (out - 1) * stride;
    return lo <= in - 1 && hi >= 0;
  };
  int64_t first = 0, last = k - 1;
  while (first < k && !reads_input(first)) ++first;
  if (first == k) return std::nullopt;  // the output is the bias alone: left as it is
  while (!reads_input(last)) --last;
  // The cropped window starts at tap `first`, its padding as much shorter; not below 0.
  while (first > 0 && first * dilation > pad_begin) --first;
  // The end pad that keeps `out` outputs: at least the span the last output's window
  // needs, and not so much more that another output would fit.
  for (;; ++last) {
    const int64_t extent = (last - first) * dilation + 1, begin = pad_begin - first * dilation;
    const int64_t end = std::max<int64_t>(0, (out - 1) * stride + extent - in - begin);
    if ((in + begin + end - extent) / stride + 1 == out) {
      if (first == 0 && last == k - 1) return std::nullopt;
      return AxisCrop{first, last, begin, end};
    }
    if (last == k - 1) return std::nullopt;
  }
}

}  // namespace

PassLog crop_windows(CompileGraph& g) {
  PassLog log{"crop_windows", {}};
  for (size_t i = 0; i < g.size(); ++i) {
    const Node node = g.node(i);
    if (node.op_type != "Conv" || node.inputs.size() < 2) continue;
    const Tensor* w = g.constant(node.inputs[1]);
    const Shape& x = g.type(node.inputs[0]).shape;
    if (!w || w->dtype() != DType::kFloat32 || (w->shape().size() != 3 && w->shape().size() != 4) ||
        x.size() != w->shape().size())
      continue;
    const Shape& ws = w->shape();
    const size_t rank = ws.size() - 2;
    const Shape spatial(x.begin() + 2, x.end()), kernel(ws.begin() + 2, ws.end());
    const Window2d win = resolve_window(parse_window_attrs(node.attrs), spatial, kernel);
    const int64_t h = rank == 2 ? x[2] : 1, wd = x.back();
    const int64_t out_h = window_output_size(h, win.kh, win.sh, win.dh, win.pad_top, win.pad_bottom, false);
    const int64_t out_w = window_output_size(wd, win.kw, win.sw, win.dw, win.pad_left, win.pad_right, false);
    AxisCrop rows{0, win.kh - 1, win.pad_top, win.pad_bottom}, cols{0, win.kw - 1, win.pad_left, win.pad_right};
    const std::optional<AxisCrop> cropped_rows = crop_axis(h, win.kh, win.sh, win.dh, win.pad_top, out_h);
    const std::optional<AxisCrop> cropped_cols = crop_axis(wd, win.kw, win.sw, win.dw, win.pad_left, out_w);
    if (!cropped_rows && !cropped_cols) continue;
    if (cropped_rows) rows = *cropped_rows;
    if (cropped_cols) cols = *cropped_cols;
    // The weights of the taps kept, [cout, cin / group, kh', kw'].
    const int64_t kh = rows.last - rows.first + 1, kw = cols.last - cols.first + 1, filters = ws[0] * ws[1];
    std::vector<float> cropped(static_cast<size_t>(filters * kh * kw));
    const auto v = w->values<float>();
    for (int64_t f = 0; f < filters; ++f)
      for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx)
          cropped[static_cast<size_t>((f * kh + ky) * kw + kx)] =
              v[static_cast<size_t>((f * win.kh + rows.first + ky) * win.kw + cols.first + kx)];
    Shape cropped_shape = {ws[0], ws[1]};
    if (rank == 2) cropped_shape.push_back(kh);
    cropped_shape.push_back(kw);
    const std::string name = g.unique_name(node.inputs[1] + ".cropped");
    g.add_constant(name, Tensor(cropped_shape, std::move(cropped)));
    const Cost before = g.cost(i);
    Attributes attrs = node.attrs;
    attrs.erase("auto_pad");
    attrs.set("kernel_shape", rank == 2 ? std::vector<int64_t>{kh, kw} : std::vector<int64_t>{kw});
    attrs.set("pads", rank == 2 ? std::vector<int64_t>{rows.pad_begin, cols.pad_begin, rows.pad_end, cols.pad_end}
                                : std::vector<int64_t>{cols.pad_begin, cols.pad_end});
    std::vector<std::string> inputs = node.inputs;
    inputs[1] = name;
    g.set_inputs(i, std::move(inputs));
    g.set_attributes(i, std::move(attrs));
    const std::string reason =
        rank == 2 ? fmt::format("{}x{} window -> {}x{}: the other taps read only padding", win.kh, win.kw, kh, kw)
                  : fmt::format("{}-tap window -> {}: the other taps read only padding", win.kw, kw);
    log.actions.push_back({"cropped", {node.name}, node.name, reason, before, g.cost(i), node.op_type});
  }
  return log;
}

}  // namespace minfer
