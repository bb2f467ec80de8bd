#include "engine/image_resize.h"

#include <algorithm>
#include <cmath>

namespace minfer {

namespace {

struct Tap {
  int index;
  float weight;
};

// For each output position along one axis, the source pixels it averages and their
// normalised weights.
std::vector<std::vector<Tap>> taps(int in, int out) {
  const double ratio = static_cast<double>(in) / out;
  const double width = std::max(1.0, ratio);  // the tent's half-width in source pixels
  std::vector<std::vector<Tap>> all(static_cast<size_t>(out));
  for (int o = 0; o < out; ++o) {
    const double centre = (o + 0.5) * ratio - 0.5;
    double total = 0;
    std::vector<Tap>& t = all[static_cast<size_t>(o)];
    for (int i = static_cast<int>(std::floor(centre - width)); i <= static_cast<int>(std::ceil(centre + width)); ++i) {
      const double w = 1.0 - std::abs(i - centre) / width;
      if (w <= 0) continue;
      t.push_back({std::clamp(i, 0, in - 1), static_cast<float>(w)});
      total += w;
    }
    for (Tap& tap : t) tap.weight = static_cast<float>(tap.weight / total);
  }
  return all;
}

// Resizes the middle axis of `src`, laid out [outer, in, inner], to [outer, out, inner].
std::vector<float> resize_axis(const std::vector<float>& src, size_t outer, size_t in, size_t inner,
                               const std::vector<std::vector<Tap>>& axis) {
  const size_t out = axis.size();
  std::vector<float> dst(outer * out * inner, 0.0f);
  for (size_t o = 0; o < outer; ++o)
    for (size_t j = 0; j < out; ++j) {
      float* d = dst.data() + (o * out + j) * inner;
      for (const Tap& t : axis[j]) {
        const float* s = src.data() + (o * in + static_cast<size_t>(t.index)) * inner;
        for (size_t i = 0; i < inner; ++i) d[i] += t.weight * s[i];
      }
    }
  return dst;
}

size_t tap_count(const std::vector<std::vector<Tap>>& axis) {
  size_t n = 0;
  for (const auto& t : axis) n += t.size();
  return n;
}

}  // namespace

std::vector<float> resize_image(const std::vector<float>& pixels, int w, int h, int channels, int out_w, int out_h) {
  const auto across = taps(w, out_w), down = taps(h, out_h);
  const size_t c = static_cast<size_t>(channels), uw = static_cast<size_t>(w), uh = static_cast<size_t>(h);
  const size_t uow = static_cast<size_t>(out_w), uoh = static_cast<size_t>(out_h);
  // The filter is separable, so either axis can go first; the work differs a lot for a
  // long thin image (1 x 4M pixels enlarged across would resize 4M rows first), so take
  // the order with fewer multiply-adds.
  const double across_first = static_cast<double>(uh) * tap_count(across) + static_cast<double>(uow) * tap_count(down);
  const double down_first = static_cast<double>(uw) * tap_count(down) + static_cast<double>(uoh) * tap_count(across);
  if (across_first <= down_first) return resize_axis(resize_axis(pixels, uh, uw, c, across), 1, uh, uow * c, down);
  return resize_axis(resize_axis(pixels, 1, uh, uw * c, down), uoh, uw, c, across);
}

}  // namespace minfer
