#include "ops/window.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "graph/errors.h"

namespace minfer {

WindowAttrs parse_window_attrs(const Attributes& attrs) {
  WindowAttrs w;
  w.kernel_shape = attrs.get_ints("kernel_shape");
  w.strides = attrs.get_ints("strides");
  w.dilations = attrs.get_ints("dilations");
  w.pads = attrs.get_ints("pads");
  w.auto_pad = attrs.get_string("auto_pad", "NOTSET");
  w.ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
  if (w.auto_pad != "NOTSET" && w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER" && w.auto_pad != "VALID")
    throw OpError("attribute 'auto_pad' has unknown value '" + excerpt(w.auto_pad) + "'");
  return w;
}

void spatial_dims_2d(const Shape& x, int64_t& h, int64_t& w) {
  if (x.size() == 3) {
    h = 1;
    w = x[2];
  } else if (x.size() == 4) {
    h = x[2];
    w = x[3];
  } else if (x.size() > 4) {
    throw UnsupportedError(fmt::format("{}-D windows are not supported (input {})", x.size() - 2, shape_str(x)));
  } else {
    throw OpError(fmt::format("input must be 3-D [N,C,L] or 4-D [N,C,H,W], got {}", shape_str(x)));
  }
}

Shape window_output_shape(const Shape& x, int64_t channels, int64_t out_h, int64_t out_w) {
  if (x.size() == 3) return {x[0], channels, out_w};
  return {x[0], channels, out_h, out_w};
}

int64_t window_output_size(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
                           bool ceil_mode) {
  const int64_t span = checked_add({checked_mul({k - 1, dilation}), 1});
  const int64_t padded = checked_add({in, pad_begin, pad_end});
  const int64_t steps = padded - span;
  // In ceil mode one window may reach past the end of an input shorter than it (PyTorch's
  // and ONNX's ceil((padded - span) / stride) + 1 is then 1), as long as it starts inside.
  if (steps < 0 && !(ceil_mode && steps > -stride))
    throw OpError(fmt::format("kernel extent {} is larger than the padded input {}", span, padded));
  int64_t out = (ceil_mode ? std::max<int64_t>(0, checked_add({steps, stride - 1}) / stride) : steps / stride) + 1;
  // As ONNX and PyTorch: in ceil mode a last window that starts in the end padding is dropped.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

namespace {

// The largest kernel size, stride, dilation or pad a window takes: 32 bits, far beyond
// any real model. Within it a window position (an output index times the stride plus a
// tap times the dilation) stays far inside int64, and so do the kernels' scratch sizes
// (a strided row is kept as `stride` phases), which are computed with checked
// arithmetic besides.
constexpr int64_t kMaxWindowValue = INT32_MAX;

// Every value in [min, kMaxWindowValue].
void check_range(const std::vector<int64_t>& v, const char* name, int64_t min) {
  for (int64_t x : v) {
    if (x < min)
      throw OpError(
          fmt::format("attribute '{}' must {}, got {}", name, min > 0 ? "be positive" : "not be negative", x));
    if (x > kMaxWindowValue)
      throw OpError(fmt::format("attribute '{}' value {} is out of range (at most {})", name, x, kMaxWindowValue));
  }
}

}  // namespace

Window2d resolve_window(const WindowAttrs& a, const Shape& spatial_in, const std::vector<int64_t>& kernel) {
  const size_t rank = spatial_in.size();
  if (rank > 2) throw UnsupportedError(fmt::format("only 1-D and 2-D windows are supported, got {}-D", rank));
  if (rank != 1 && rank != 2) throw OpError(fmt::format("only 1-D and 2-D windows are supported, got {}-D", rank));
  auto sized = [&](const std::vector<int64_t>& v, size_t n, const char* name, int64_t fill) {
    if (v.empty()) return std::vector<int64_t>(n, fill);
    if (v.size() != n) throw OpError(fmt::format("attribute '{}' must have {} values, got {}", name, n, v.size()));
    return v;
  };
  std::vector<int64_t> k = sized(kernel, rank, "kernel_shape", 1);
  std::vector<int64_t> s = sized(a.strides, rank, "strides", 1);
  std::vector<int64_t> d = sized(a.dilations, rank, "dilations", 1);
  std::vector<int64_t> p = sized(a.pads, 2 * rank, "pads", 0);
  check_range(k, "kernel_shape", 1);
  check_range(s, "strides", 1);
  check_range(d, "dilations", 1);
  check_range(p, "pads", 0);

  if (a.auto_pad == "VALID") {
    std::fill(p.begin(), p.end(), 0);
  } else if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < rank; ++i) {
      const int64_t out = checked_add({spatial_in[i], s[i] - 1}) / s[i];
      const int64_t total = std::max<int64_t>(
          0, checked_add({checked_mul({out - 1, s[i]}), checked_mul({k[i] - 1, d[i]}), 1, -spatial_in[i]}));
      int64_t small = total / 2, large = total - small;
      p[i] = a.auto_pad == "SAME_UPPER" ? small : large;
      p[i + rank] = a.auto_pad == "SAME_UPPER" ? large : small;
    }
  }
  Window2d w;
  if (rank == 1) {
    w.kw = k[0];
    w.sw = s[0];
    w.dw = d[0];
    w.pad_left = p[0];
    w.pad_right = p[1];
  } else {
    w.kh = k[0];
    w.kw = k[1];
    w.sh = s[0];
    w.sw = s[1];
    w.dh = d[0];
    w.dw = d[1];
    w.pad_top = p[0];
    w.pad_left = p[1];
    w.pad_bottom = p[2];
    w.pad_right = p[3];
  }
  return w;
}

TransposedWindow resolve_transposed_window(const WindowAttrs& a, const Shape& spatial_in,
                                           const std::vector<int64_t>& kernel,
                                           const std::vector<int64_t>& output_padding,
                                           const std::vector<int64_t>& output_shape) {
  WindowAttrs explicit_pads = a;  // resolve_window's auto_pad is Conv's; ConvTranspose's differs
  explicit_pads.auto_pad = "NOTSET";
  TransposedWindow t;
  t.win = resolve_window(explicit_pads, spatial_in, kernel);
  const size_t rank = spatial_in.size();
  if (!output_padding.empty() && output_padding.size() != rank)
    throw OpError(fmt::format("attribute 'output_padding' must have {} values, got {}", rank, output_padding.size()));
  if (!output_shape.empty() && output_shape.size() != rank)
    throw OpError(fmt::format("attribute 'output_shape' must have {} values (the spatial sizes), got {}", rank,
                              output_shape.size()));
  struct Axis {
    int64_t in, k, s, d;
    int64_t &pad_begin, &pad_end, &out;
  };
  Window2d& w = t.win;
  std::vector<Axis> axes;
  if (rank == 2) axes.push_back({spatial_in[0], w.kh, w.sh, w.dh, w.pad_top, w.pad_bottom, t.out_h});
  axes.push_back({spatial_in[rank - 1], w.kw, w.sw, w.dw, w.pad_left, w.pad_right, t.out_w});
  for (size_t i = 0; i < rank; ++i) {
    Axis& x = axes[i];
    const int64_t adj = output_padding.empty() ? 0 : output_padding[i];
    if (adj < 0 || adj >= std::max(x.s, x.d))
      throw OpError(
          fmt::format("attribute 'output_padding' value {} must be non-negative and smaller than the "
                      "stride {} or the dilation {}",
                      adj, x.s, x.d));
    // the output with no padding
    const int64_t reach = checked_add({checked_mul({x.s, x.in - 1}), adj, checked_mul({x.k - 1, x.d}), 1});
    const bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
    if (!output_shape.empty() || same) {
      const int64_t target = output_shape.empty() ? checked_mul({x.in, x.s}) : output_shape[i];
      if (target <= 0) throw OpError(fmt::format("attribute 'output_shape' must be positive, got {}", target));
      const int64_t total = reach - target;
      if (total < 0) {
        x.pad_begin = 0;
        x.pad_end = total;
      } else if (a.auto_pad == "SAME_UPPER") {
        x.pad_begin = total / 2;
        x.pad_end = total - x.pad_begin;
      } else {
        x.pad_end = total / 2;
        x.pad_begin = total - x.pad_end;
      }
    } else if (a.auto_pad == "VALID") {
      x.pad_begin = x.pad_end = 0;
    }
    x.out = checked_add({reach, -x.pad_begin, -x.pad_end});
    if (x.out <= 0)
      throw OpError(fmt::format("pads {} and {} leave no output (the input reaches {} positions)", x.pad_begin,
                                x.pad_end, reach));
  }
  return t;
}

namespace {

// One axis of a window: the taps [first, last] kept and the cropped window's pads.
struct AxisCrop {
  int64_t first, last, pad_begin, pad_end;
};

// The crop of one axis of `in` elements, k taps `dilation` apart, `stride`, `pad_begin`,
// `out` outputs; nothing where every tap reads the input somewhere (or none does).
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

std::optional<WindowCrop> crop_to_input(const ConvGeometry& g) {
  const Window2d& w = g.win;
  const std::optional<AxisCrop> rows = crop_axis(g.h, w.kh, w.sh, w.dh, w.pad_top, g.out_h);
  const std::optional<AxisCrop> cols = crop_axis(g.w, w.kw, w.sw, w.dw, w.pad_left, g.out_w);
  if (!rows && !cols) return std::nullopt;
  WindowCrop c;
  c.win = w;
  if (rows) {
    c.ky0 = rows->first;
    c.win.kh = rows->last - rows->first + 1;
    c.win.pad_top = rows->pad_begin;
    c.win.pad_bottom = rows->pad_end;
  }
  if (cols) {
    c.kx0 = cols->first;
    c.win.kw = cols->last - cols->first + 1;
    c.win.pad_left = cols->pad_begin;
    c.win.pad_right = cols->pad_end;
  }
  return c;
}

}  // namespace minfer
