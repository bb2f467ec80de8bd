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

}  // namespace

std::vector<float> resize_image(const std::vector<float>& pixels, int w, int h, int channels, int out_w, int out_h) {
  const auto across = taps(w, out_w), down = taps(h, out_h);
  const size_t c = static_cast<size_t>(channels);
  std::vector<float> rows(static_cast<size_t>(h) * out_w * c, 0.0f);  // resized across, h x out_w
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < out_w; ++x)
      for (const Tap& t : across[static_cast<size_t>(x)])
        for (size_t k = 0; k < c; ++k)
          rows[(static_cast<size_t>(y) * out_w + x) * c + k] +=
              t.weight * pixels[(static_cast<size_t>(y) * w + t.index) * c + k];
  std::vector<float> out(static_cast<size_t>(out_h) * out_w * c, 0.0f);
  for (int y = 0; y < out_h; ++y)
    for (const Tap& t : down[static_cast<size_t>(y)])
      for (size_t i = 0; i < static_cast<size_t>(out_w) * c; ++i)
        out[static_cast<size_t>(y) * out_w * c + i] += t.weight * rows[static_cast<size_t>(t.index) * out_w * c + i];
  return out;
}

}  // namespace minfer
