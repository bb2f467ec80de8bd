// Images as model inputs: decode (PNG, JPEG, BMP, with stb_image), resize to the
// input's height and width, take grayscale or RGB by its channel count, normalise into
// NCHW floats; and the top classes of a classifier's output.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "engine/session.h"
#include "graph/memory_limit.h"

namespace minfer {

// The image at `path` as a tensor of `shape` [N, C, H, W] (C 1: grayscale, 3: RGB; every
// batch row holds the image), resized by resize_image (engine/image_resize.h). Pixels
// become [0, 1], then (x - mean[c]) / std[c]. Throws UsageError "<path>: <cause>" for
// an unreadable image, or one whose decoding would pass `max_memory` (the file's header
// gives its size, checked before any pixel is decoded).
std::vector<float> image_to_tensor(const std::string& path, const Shape& shape, const Preprocess& preprocess,
                                   int64_t max_memory = default_max_memory());

// The same from the encoded file's bytes in memory; `source` names it in messages.
std::vector<float> image_to_tensor(std::span<const unsigned char> bytes, const std::string& source, const Shape& shape,
                                   const Preprocess& preprocess, int64_t max_memory = default_max_memory());

// Puts the image into the model's first graph input (under the model's max_memory).
void set_image_input(Session& session, const std::string& path, const Preprocess& preprocess);

struct ClassScore {
  int64_t index = 0;
  float score = 0;
  std::string label;  // empty when the model has no labels
};

// The k highest of `scores` (ties: lower index first), with the model's labels when it
// has them; throws ModelError when the labels do not match the number of scores.
std::vector<ClassScore> top_classes(std::span<const float> scores, int k, const Graph& graph);

// The classification of `image` by the session's last run, for the report: its first
// output's top k classes (of the first batch row).
nlohmann::json classification_report(const Session& session, const std::string& image, int k);

}  // namespace minfer
