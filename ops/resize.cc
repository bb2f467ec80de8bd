// Resize (opset 10 to 19: nearest, linear and cubic; the coordinate transformations
// half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric,
// tf_half_pixel_for_nn; scales or sizes, for all axes or those of `axes`, sizes kept to
// the input's aspect ratio by keep_aspect_ratio_policy; antialias where it changes
// nothing: upsampling or nearest) and Upsample (opset 7 and 9: nearest or linear, asymmetric), on float32 of any
// rank, as ONNX's reference computes them: each output coordinate maps to a point of the
// input along each axis, which is read from its taps (1 for nearest, 2 for linear, 4 for
// cubic), indices clamped to the axis.
//
// FLOPs per output element, for each axis whose size changes: linear 3 (a lerp: two
// multiplies and an add), cubic 7 (four multiplies and three adds), nearest 0.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "ops/kernels/threads.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Transform {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn
};
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

constexpr size_t kMaxRank = 8;

// One output coordinate's taps along one axis: input indices and their weights.
struct AxisTaps {
  int64_t count = 0;  // taps per output coordinate
  std::vector<int64_t> index;
  std::vector<float> weight;  // count per output coordinate, in order
  bool unit_weights = false;  // every weight is 1 (nearest, or an axis kept as it is)
};

// ONNX's cubic convolution weights for the four taps around a point `ratio` past the second.
std::array<double, 4> cubic_weights(double r, double a) {
  const double s = 1 - r;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a, ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * s - (a + 3)) * s * s + 1, ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

Mode parse_mode(const std::string& mode) {
  if (mode == "nearest") return Mode::kNearest;
  if (mode == "linear" || mode == "bilinear") return Mode::kLinear;
  if (mode == "cubic") return Mode::kCubic;
  throw OpError(fmt::format("attribute 'mode' must be nearest, linear or cubic, got '{}'", mode));
}

Transform parse_transform(const std::string& t) {
  if (t == "half_pixel") return Transform::kHalfPixel;
  if (t == "half_pixel_symmetric") return Transform::kHalfPixelSymmetric;
  if (t == "pytorch_half_pixel") return Transform::kPytorchHalfPixel;
  if (t == "align_corners") return Transform::kAlignCorners;
  if (t == "asymmetric") return Transform::kAsymmetric;
  if (t == "tf_half_pixel_for_nn") return Transform::kTfHalfPixelForNn;
  if (t == "tf_crop_and_resize")
    throw UnsupportedError("coordinate_transformation_mode 'tf_crop_and_resize' is not supported");
  throw OpError(fmt::format("unknown coordinate_transformation_mode '{}'", t));
}

Rounding parse_rounding(const std::string& r) {
  if (r == "round_prefer_floor") return Rounding::kRoundPreferFloor;
  if (r == "round_prefer_ceil") return Rounding::kRoundPreferCeil;
  if (r == "floor") return Rounding::kFloor;
  if (r == "ceil") return Rounding::kCeil;
  throw OpError(fmt::format("unknown nearest_mode '{}'", r));
}

struct ResizeSettings {
  Mode mode = Mode::kNearest;
  Transform transform = Transform::kHalfPixel;
  Rounding rounding = Rounding::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

// Output coordinate `o`'s position on the input axis, by the transform's formula in
// `Real` arithmetic.
template <typename Real>
Real source_coordinate(Transform transform, int64_t in, int64_t out, double scale_given, int64_t o) {
  // The reference's output length in the transforms is scale * in, not the rounded size
  // (but see align_corners).
  const Real scale = static_cast<Real>(scale_given), length = scale * static_cast<Real>(in);
  const Real od = static_cast<Real>(o), half = static_cast<Real>(0.5);
  switch (transform) {
    case Transform::kHalfPixel: return (od + half) / scale - half;
    case Transform::kHalfPixelSymmetric: {
      // The rounded output's centre kept on the input's: half_pixel shifted by what rounding took.
      const Real centre = static_cast<Real>(in) / 2;
      return centre * (1 - static_cast<Real>(out) / length) + (od + half) / scale - half;
    }
    case Transform::kPytorchHalfPixel: return length == 1 ? -half : (od + half) / scale - half;
    // The output's own size, not scale * in: PyTorch's align_corners=True and ONNX
    // Runtime map the corners of the rounded output (ONNX's reference, and its two
    // *_downsample_scales_*_align_corners cases, use 2.4 for 4 x 0.6 where they use 2).
    case Transform::kAlignCorners: return out == 1 ? 0 : od * static_cast<Real>(in - 1) / static_cast<Real>(out - 1);
    case Transform::kAsymmetric: return od / scale;
    case Transform::kTfHalfPixelForNn: return (od + half) / scale;
  }
  return 0;
}

// The taps of every output coordinate of one axis from `in` to `out` elements at
// `scale` (out / in unless the scales input said otherwise).
AxisTaps axis_taps(const ResizeSettings& s, int64_t in, int64_t out, double scale) {
  AxisTaps t;
  t.count = s.mode == Mode::kNearest ? 1 : s.mode == Mode::kLinear ? 2 : 4;
  if (in == out && scale == 1.0) t.count = 1;  // every transform maps o to o
  auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    if (t.count == 1 && in == out && scale == 1.0) {
      t.index.push_back(o);
      t.weight.push_back(1.0f);
      continue;
    }
    // Nearest picks by rounding the position, so it is computed as ONNX Runtime and
    // PyTorch compute it, in float: 3 / 0.6f is 5 in float, 4.9999998 in double (PyTorch's
    // Upsample(scale_factor=0.6) reads input 5 for output 3). Weights sum in double.
    const double x = s.mode == Mode::kNearest ? source_coordinate<float>(s.transform, in, out, scale, o)
                                              : source_coordinate<double>(s.transform, in, out, scale, o);
    // The reference's base tap: the point lies `r` past it, r in (0, 1] (an integral
    // point is all weight on the tap after the base).
    const double fl = std::floor(x);
    const int64_t base = x == fl ? static_cast<int64_t>(fl) - 1 : static_cast<int64_t>(fl);
    const double r = x - static_cast<double>(base);
    if (s.mode == Mode::kNearest) {
      bool after = true;
      if (r < 1) switch (s.rounding) {
          case Rounding::kRoundPreferFloor: after = r > 0.5; break;
          case Rounding::kRoundPreferCeil: after = r >= 0.5; break;
          case Rounding::kFloor: after = false; break;
          case Rounding::kCeil: after = true; break;
        }
      t.index.push_back(clamp(after ? base + 1 : base));
      t.weight.push_back(1.0f);
    } else if (s.mode == Mode::kLinear) {
      t.index.insert(t.index.end(), {clamp(base), clamp(base + 1)});
      t.weight.insert(t.weight.end(), {static_cast<float>(1 - r), static_cast<float>(r)});
    } else {
      std::array<double, 4> w = cubic_weights(r, s.cubic_a);
      double sum = 0;
      for (int64_t k = 0; k < 4; ++k) {
        const int64_t i = base - 1 + k;
        if (s.exclude_outside && (i < 0 || i >= in)) w[k] = 0;
        sum += w[k];
      }
      for (int64_t k = 0; k < 4; ++k) {
        t.index.push_back(clamp(base - 1 + k));
        t.weight.push_back(static_cast<float>(s.exclude_outside ? w[k] / sum : w[k]));
      }
    }
  }
  t.unit_weights = std::all_of(t.weight.begin(), t.weight.end(), [](float w) { return w == 1.0f; });
  return t;
}

// The output as rows along the last axis. Each output row reads a few input rows (the
// tensor product of its taps along the other axes, their weights multiplied), and each
// of its elements the last axis's taps in each of those rows, summed in double as the
// reference sums (a 2x bilinear upsampling: 2 rows x 2 taps). Rows are split among
// threads; a row reading what the row before it read (nearest upsampling repeats each
// input row) is a copy of that row. An odometer over every tap of every element took
// DeepLabV3's 14x14 -> 224x224 upsampling 20 ms, 40x ONNX Runtime's time.
class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(std::vector<AxisTaps> taps, Shape in, Shape out)
      : Kernel({}), taps_(std::move(taps)), in_(std::move(in)), out_(std::move(out)) {
    in_strides_.assign(in_.size(), 1);
    for (size_t d = in_.size(); d-- > 1;) in_strides_[d - 1] = in_strides_[d] * in_[d];
    const AxisTaps& cols = taps_.back();
    const int64_t in_w = in_.back(), out_w = out_.back();
    if (in_w == 0) return;  // an empty input (no ratio to find)
    if (cols.count == 1 && cols.unit_weights && out_w % in_w == 0 && out_w > in_w) {
      repeat_ = out_w / in_w;
      for (int64_t o = 0; o < out_w && repeat_; ++o)
        if (cols.index[static_cast<size_t>(o)] != o / repeat_) repeat_ = 0;
    }
    const int64_t s = out_w / in_w;
    if (cols.count == 2 && out_w == s * in_w && (s == 2 || s == 4 || s == 8) && in_w >= 3) {
      // Output s j + p of input element j reads elements j - 1 and j (p < s / 2) or j and
      // j + 1 with phase p's weights, those of j = 1, checked for every inner j.
      period_ = s;
      for (int64_t p = 0; p < s; ++p) {
        phase_weights_[static_cast<size_t>(2 * p)] = cols.weight[static_cast<size_t>(2 * (s + p))];
        phase_weights_[static_cast<size_t>(2 * p + 1)] = cols.weight[static_cast<size_t>(2 * (s + p) + 1)];
      }
      for (int64_t j = 1; j + 1 < in_w && period_; ++j)
        for (int64_t p = 0; p < s; ++p) {
          const auto o = static_cast<size_t>(2 * (s * j + p));
          const int64_t first = p < s / 2 ? j - 1 : j;
          if (cols.index[o] != first || cols.index[o + 1] != first + 1 ||
              cols.weight[o] != phase_weights_[static_cast<size_t>(2 * p)] ||
              cols.weight[o + 1] != phase_weights_[static_cast<size_t>(2 * p + 1)])
            period_ = 0;
        }
    }
  }

  void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
           Workspace) const override {
    const int64_t width = out_.back(), total = out[0].size();
    if (total == 0) return;
    const int64_t rows = total / width;
    const int team =
        kernels::threads_worth_starting(total * taps_.back().count, rows, ctx.num_threads, kernels::Work::kStreaming);
    kernels::for_each_on_team(
        team, team, [&](int64_t t) { resize_rows(in[0].f32(), out[0].f32(), rows * t / team, rows * (t + 1) / team); });
  }

 private:
  struct RowTap {
    int64_t offset;  // of the input row
    double weight;
    bool operator==(const RowTap&) const = default;
  };

  // An input row resized along the last axis (in double), kept while output rows read it.
  struct CachedRow {
    int64_t offset = -1, used = -1;  // the input row's offset; the output row that last read it
    std::vector<double> values;
  };
  static constexpr size_t kCachedRows = 8;

  // Output rows [first, end).
  void resize_rows(const float* x, float* y, int64_t first, int64_t end) const {
    const size_t axes = out_.size() - 1;  // the axes that pick rows
    const int64_t width = out_.back();
    const AxisTaps& cols = taps_.back();
    std::array<int64_t, kMaxRank> coord{}, tap{};
    for (int64_t r = first, d = static_cast<int64_t>(axes); d-- > 0; r /= out_[d]) coord[d] = r % out_[d];
    std::vector<RowTap> taps, previous;
    std::vector<CachedRow> cache(kCachedRows);
    std::vector<double> sums(static_cast<size_t>(width)), uncached(static_cast<size_t>(width));
    for (int64_t row = first; row < end; ++row) {
      // The input rows this output row reads: an odometer over the row axes' taps.
      taps.clear();
      tap.fill(0);
      for (;;) {
        RowTap t{0, 1.0};
        for (size_t d = 0; d < axes; ++d) {
          const size_t at = static_cast<size_t>(coord[d] * taps_[d].count + tap[d]);
          t.weight *= taps_[d].weight[at];
          t.offset += taps_[d].index[at] * in_strides_[d];
        }
        taps.push_back(t);
        size_t d = axes;
        while (d-- > 0 && ++tap[d] == taps_[d].count) tap[d] = 0;
        if (d == static_cast<size_t>(-1)) break;
      }
      float* yr = y + row * width;
      if (row > first && taps == previous) {
        std::copy_n(yr - width, width, yr);
      } else if (cols.count == 1 && taps.size() == 1 && taps[0].weight == 1 && cols.unit_weights) {
        // Nearest.
        if (repeat_ == 2)
          repeat_twice(x + taps[0].offset, in_.back(), yr);
        else if (repeat_ > 0)
          for (int64_t i = 0; i < in_.back(); ++i) std::fill_n(yr + i * repeat_, repeat_, x[taps[0].offset + i]);
        else
          gather(x + taps[0].offset, cols.index.data(), width, yr);
      } else {
        // Each input row resized along the last axis once, however many output rows read
        // it (DeepLabV3's 8x bilinear upsampling: each by 8), kept in the cache where an
        // output row reads at most kCachedRows of them; then the rows' weighted sum.
        const auto resized_row = [&](size_t r) -> const double* {
          if (taps.size() <= kCachedRows) return cached_row(x, taps[r].offset, row, cache).data();
          resize_row(x + taps[r].offset, uncached.data());
          return uncached.data();
        };
        const double* h0 = resized_row(0);
        const double w0 = taps[0].weight;
        if (taps.size() == 1) {
          for (int64_t o = 0; o < width; ++o) yr[o] = static_cast<float>(w0 * h0[o]);
        } else if (taps.size() == 2) {
          // The loop below's sums in one pass (linear's two rows).
          const double* h1 = resized_row(1);
          const double w1 = taps[1].weight;
          for (int64_t o = 0; o < width; ++o) yr[o] = static_cast<float>(w0 * h0[o] + w1 * h1[o]);
        } else {
          for (int64_t o = 0; o < width; ++o) sums[o] = w0 * h0[o];
          for (size_t r = 1; r < taps.size(); ++r) {
            const double* h = resized_row(r);
            const double w = taps[r].weight;
            for (int64_t o = 0; o < width; ++o) sums[o] += w * h[o];
          }
          for (int64_t o = 0; o < width; ++o) yr[o] = static_cast<float>(sums[o]);
        }
      }
      std::swap(taps, previous);
      for (size_t d = axes; d-- > 0;) {
        if (++coord[d] < out_[d]) break;
        coord[d] = 0;
      }
    }
  }

  // y[o] = xr[index[o]]: a loop of its own, whose pointers stay in registers (inline in
  // resize_rows, GCC reloaded y from the stack at every element).
  [[gnu::noinline]] static void gather(const float* __restrict xr, const int64_t* __restrict index, int64_t n,
                                       float* __restrict y) {
    for (int64_t o = 0; o < n; ++o) y[o] = xr[index[o]];
  }

  // y[2 i] = y[2 i + 1] = xr[i]: nearest's 2x upsampling, in vectors (gather took 0.3 ns
  // an element).
  [[gnu::noinline]] static void repeat_twice(const float* __restrict xr, int64_t n, float* __restrict y) {
    for (int64_t i = 0; i < n; ++i) y[2 * i] = y[2 * i + 1] = xr[i];
  }

  // The input row at `offset` resized along the last axis, from the cache or into the
  // slot no tap of output row `row` holds that was read longest ago.
  const std::vector<double>& cached_row(const float* x, int64_t offset, int64_t row,
                                        std::vector<CachedRow>& cache) const {
    CachedRow* slot = &cache[0];
    for (CachedRow& c : cache) {
      if (c.offset == offset) {
        c.used = row;
        return c.values;
      }
      if (c.used < slot->used) slot = &c;
    }
    const int64_t width = out_.back();
    slot->offset = offset;
    slot->used = row;
    slot->values.resize(static_cast<size_t>(width));
    resize_row(x + offset, slot->values.data());
    return slot->values;
  }

  // Input row xr resized along the last axis into h: each element its taps' weighted sum.
  void resize_row(const float* xr, double* h) const {
    const int64_t width = out_.back();
    switch (taps_.back().count) {
      case 1: return resize_row_of<1>(xr, 0, width, h);
      case 2:
        if (period_ == 0) return resize_row_of<2>(xr, 0, width, h);
        // The first and last input elements' outputs read a clamped tap.
        resize_row_of<2>(xr, 0, period_, h);
        if (period_ == 2) resize_row_periodic<2>(xr, h);
        if (period_ == 4) resize_row_periodic<4>(xr, h);
        if (period_ == 8) resize_row_periodic<8>(xr, h);
        return resize_row_of<2>(xr, width - period_, width, h);
      default: return resize_row_of<4>(xr, 0, width, h);
    }
  }
  // Outputs [o0, o1).
  template <int K>
  void resize_row_of(const float* xr, int64_t o0, int64_t o1, double* h) const {
    const AxisTaps& cols = taps_.back();
    const int64_t* index = cols.index.data();
    const float* weight = cols.weight.data();
    for (int64_t o = o0; o < o1; ++o) {
      double sum = 0;
      for (int k = 0; k < K; ++k) sum += static_cast<double>(weight[o * K + k]) * xr[index[o * K + k]];
      h[o] = sum;
    }
  }
  // resize_row_of<2>'s sums for the inner input elements' outputs, S = period_ at a time
  // from neighbouring elements with the phases' weights: no index read, in vectors (the
  // gathers took 1 ns an output).
  template <int S>
  void resize_row_periodic(const float* xr, double* h) const {
    const double* w = phase_weights_.data();
    for (int64_t j = 1, n = in_.back(); j + 1 < n; ++j)
      for (int p = 0; p < S; ++p) {
        const float* at = xr + j + (p < S / 2 ? -1 : 0);
        double sum = 0;
        sum += w[2 * p] * at[0];
        sum += w[2 * p + 1] * at[1];
        h[S * j + p] = sum;
      }
  }

  std::vector<AxisTaps> taps_;
  Shape in_, out_, in_strides_;
  // Nearest along the last axis that repeats each input element this many times in
  // order (an integral upsampling: index o / repeat_), else 0.
  int64_t repeat_ = 0;
  // Linear along the last axis at a 2x, 4x or 8x upsampling whose taps repeat every
  // period_ outputs one input element on (half_pixel's, pytorch_half_pixel's,
  // asymmetric's), else 0; each phase's two weights.
  int64_t period_ = 0;
  std::array<double, 16> phase_weights_{};
};

class ResizeOp final : public Op {
 public:
  explicit ResizeOp(const Node& node) : upsample_(node.op_type == "Upsample") {
    if (upsample_) {
      node.attrs.check_known({"mode", "scales"});
      scales_attr_ = node.attrs.get_floats("scales");
      s_.transform = Transform::kAsymmetric;
      s_.rounding = Rounding::kFloor;
    } else {
      node.attrs.check_known({"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
                              "exclude_outside", "extrapolation_value", "antialias", "axes",
                              "keep_aspect_ratio_policy"});
      antialias_ = node.attrs.get_int("antialias", 0) != 0;
      axes_ = node.attrs.get_ints("axes");
      const std::string policy = node.attrs.get_string("keep_aspect_ratio_policy", "stretch");
      if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
        throw OpError(fmt::format("unknown keep_aspect_ratio_policy '{}'", excerpt(policy)));
      policy_ = policy[0] == 's' ? 0 : policy == "not_larger" ? -1 : 1;
      s_.transform = parse_transform(node.attrs.get_string("coordinate_transformation_mode", "half_pixel"));
      s_.rounding = parse_rounding(node.attrs.get_string("nearest_mode", "round_prefer_floor"));
      s_.cubic_a = node.attrs.get_float("cubic_coeff_a", -0.75);
      s_.exclude_outside = node.attrs.get_int("exclude_outside", 0) != 0;
      // Opset 10's Resize (inputs X and scales only) maps coordinates asymmetrically.
      opset10_ = node.inputs.size() == 2;
      if (opset10_) {
        s_.transform = Transform::kAsymmetric;
        s_.rounding = Rounding::kFloor;
      }
    }
    s_.mode = parse_mode(node.attrs.get_string("mode", "nearest"));
    if (upsample_ && s_.mode == Mode::kCubic) throw OpError("Upsample's mode must be nearest or linear");
  }
  OpTraits traits() const override {
    OpTraits t;
    t.non_data_inputs = ~1u;  // roi, scales, sizes
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, 1, 4);
    require_float(in.first(1));
    if (in[0].shape().size() > kMaxRank)
      throw UnsupportedError(fmt::format("rank {} is above the supported {}", in[0].shape().size(), kMaxRank));
    return {{DType::kFloat32, plan(in).out}};
  }
  OpCost cost(const OpSignature& sig) const override {
    const Shape &x = sig.inputs[0].shape(), &y = sig.outputs[0].shape();
    int64_t axes = 0;
    for (size_t d = 0; d < x.size(); ++d) axes += x[d] != y[d];
    const int64_t per_axis = s_.mode == Mode::kLinear ? 3 : s_.mode == Mode::kCubic ? 7 : 0;
    const int64_t e = num_elements(y);
    const CostExpr flops = per_axis == 0 ? CostExpr(0)
                                         : CostExpr::of("FLOPs/axis", per_axis) * CostExpr::of("resized axes", axes) *
                                               CostExpr::of("output elements", e);
    return op_cost(*this, sig, 0, flops);
  }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    const Plan p = plan(sig.inputs);
    const Shape& x = sig.inputs[0].shape();
    std::vector<AxisTaps> taps;
    for (size_t d = 0; d < x.size(); ++d) taps.push_back(axis_taps(s_, x[d], p.out[d], p.scales[d]));
    return std::make_unique<ResizeKernel>(std::move(taps), x, p.out);
  }

 private:
  struct Plan {
    Shape out;
    std::vector<double> scales;
  };

  static std::vector<double> constant_floats(std::span<const OpInput> in, size_t index, const char* what) {
    if (!in[index].constant) throw UnsupportedError(fmt::format("{} must be a constant", what));
    std::vector<double> v;
    for (int64_t i = 0; i < in[index].constant->size(); ++i) v.push_back(in[index].constant->number(i));
    return v;
  }

  // The output shape and each axis's scale from the scales (or sizes) input or attribute.
  Plan plan(std::span<const OpInput> in) const {
    const Shape& x = in[0].shape();
    std::vector<double> scales;
    Shape sizes;
    if (upsample_) {
      check_input_count(in, 1, 2);
      scales = in.size() == 2 ? constant_floats(in, 1, "scales") : scales_attr_;
    } else {
      check_input_count(in, 1, 4);
      const size_t scales_at = opset10_ ? 1 : 2;
      if (in.size() > scales_at && in[scales_at].present && in[scales_at].constant &&
          in[scales_at].constant->size() > 0)
        scales = constant_floats(in, scales_at, "scales");
      else if (in.size() > scales_at && in[scales_at].present && !in[scales_at].constant)
        throw UnsupportedError("scales must be a constant");
      if (!opset10_ && in.size() > 3 && in[3].present) sizes = constant_ints(in, 3, "sizes");
    }
    if (scales.empty() == sizes.empty()) throw OpError("exactly one of scales and sizes must be given");
    const std::vector<size_t> axes = resized_axes(x.size());
    const std::vector<double>& given = sizes.empty() ? scales : std::vector<double>(sizes.begin(), sizes.end());
    if (given.size() != axes.size())
      throw OpError(
          fmt::format("{} has {} values for {} axes", sizes.empty() ? "scales" : "sizes", given.size(), axes.size()));
    Plan p{x, std::vector<double>(x.size(), 1.0)};
    if (!sizes.empty()) {
      for (size_t i = 0; i < axes.size(); ++i)
        if (sizes[i] < 1) throw OpError(fmt::format("sizes[{}] is {}; it must be positive", i, sizes[i]));
      // keep_aspect_ratio_policy: one scale for every axis given, the least or the
      // largest of theirs, and sizes rounded half up from it (the reference's).
      double common = policy_ < 0 ? INFINITY : 0;
      for (size_t i = 0; i < axes.size(); ++i) {
        const double r = static_cast<double>(sizes[i]) / static_cast<double>(x[axes[i]]);
        common = policy_ < 0 ? std::min(common, r) : std::max(common, r);
      }
      for (size_t i = 0; i < axes.size(); ++i) {
        const size_t d = axes[i];
        p.out[d] = policy_ == 0 ? sizes[i]
                                : std::max<int64_t>(1, static_cast<int64_t>(common * static_cast<double>(x[d]) + 0.5));
        p.scales[d] = policy_ == 0 ? static_cast<double>(sizes[i]) / static_cast<double>(x[d]) : common;
      }
    } else {
      for (size_t i = 0; i < axes.size(); ++i) {
        const size_t d = axes[i];
        if (!(scales[i] > 0) || !std::isfinite(scales[i]))
          throw OpError(fmt::format("scales[{}] is {}; it must be positive", i, scales[i]));
        // In float, as ONNX Runtime computes it (the scales are float32): 10 x 0.7f is 7
        // in float, 6.9999999 in double, and PyTorch's Upsample(scale_factor=0.7) makes 7.
        const double size = std::floor(static_cast<float>(x[d]) * static_cast<float>(scales[i]));
        if (size > 1e15) throw OpError(fmt::format("scales[{}] = {} makes the output too large", i, scales[i]));
        if (size < 1) throw OpError(fmt::format("scales[{}] = {} leaves axis {} empty", i, scales[i], d));
        p.out[d] = static_cast<int64_t>(size);
        p.scales[d] = scales[i];
      }
    }
    // Antialiasing widens the linear and cubic filters where they shrink an axis.
    if (antialias_ && s_.mode != Mode::kNearest)
      for (size_t d = 0; d < x.size(); ++d)
        if (p.scales[d] < 1) throw UnsupportedError("antialias when downscaling is not supported");
    return p;
  }

  // The axes scales and sizes name: `axes` (opset 18), else all.
  std::vector<size_t> resized_axes(size_t rank) const {
    std::vector<size_t> axes;
    if (axes_.empty())
      for (size_t d = 0; d < rank; ++d) axes.push_back(d);
    for (int64_t a : axes_) {
      const size_t d = static_cast<size_t>(normalize_axis(a, static_cast<int64_t>(rank), "axes"));
      if (std::find(axes.begin(), axes.end(), d) != axes.end()) throw OpError(fmt::format("axis {} is given twice", a));
      axes.push_back(d);
    }
    return axes;
  }

  bool upsample_, opset10_ = false, antialias_ = false;
  std::vector<int64_t> axes_;
  int policy_ = 0;  // keep_aspect_ratio_policy: 0 stretch, -1 not_larger, 1 not_smaller
  std::vector<double> scales_attr_;
  ResizeSettings s_;
};

}  // namespace

std::unique_ptr<Op> make_resize(const Node& node) {
  return std::make_unique<ResizeOp>(node);
}

}  // namespace minfer
