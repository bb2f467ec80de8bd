// Resizing an interleaved float image with a triangle (tent) filter: bilinear
// interpolation when enlarging, an area-weighted average when shrinking (the tent
// widens with the ratio, so no pixel is skipped). Edges are clamped. Written here
// rather than taken from stb_image_resize, whose v1 asserts on some shrink ratios.
#pragma once

#include <vector>

namespace minfer {

// `pixels` is h x w x channels, row-major; returns out_h x out_w x channels. Output
// pixel i samples the source at (i + 0.5) * in / out - 0.5 (pixel centres aligned).
std::vector<float> resize_image(const std::vector<float>& pixels, int w, int h, int channels, int out_w, int out_h);

}  // namespace minfer
