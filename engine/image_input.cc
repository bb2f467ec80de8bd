#include "engine/image_input.h"

#include <fmt/format.h>
#include <stb/stb_image.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "engine/image_resize.h"
#include "graph/errors.h"
#include "graph/input_file.h"

namespace minfer {

namespace {

struct StbiFree {
  void operator()(unsigned char* p) const { stbi_image_free(p); }
};

// mean or std for channel c: one value for all channels, or one per channel.
float per_channel(const std::vector<float>& values, int64_t c) {
  return values.size() == 1 ? values[0] : values[c];
}

// stb_image's own buffers take up to this many bytes per pixel while it decodes (a
// progressive JPEG's coefficients, a PNG's filtered rows, then the pixels themselves).
constexpr int64_t kDecodeBytesPerPixel = 16;

// Debian's stb_image (2.27) trusts the code counts of a JPEG's Huffman tables (DHT
// segments): counts adding up to more than 256 write past its tables (found by
// tests/fuzz/fuzz_image; newer stb refuses them). Walks the segments as stb reads them.
bool has_oversized_jpeg_huffman_table(std::span<const unsigned char> b) {
  if (b.size() < 2 || b[0] != 0xFF || b[1] != 0xD8) return false;
  auto byte = [&](size_t i) -> size_t { return i < b.size() ? b[i] : 0; };  // stb reads 0 past the end
  for (size_t i = 2; i + 1 < b.size();) {
    const unsigned char marker = b[i + 1];
    // Entropy-coded data, fill bytes, stuffed zeros and the markers without a length.
    if (b[i] != 0xFF || marker == 0xFF || marker == 0x00 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD9)) {
      i += b[i] == 0xFF && marker != 0xFF ? 2 : 1;
      continue;
    }
    const size_t length = byte(i + 2) << 8 | byte(i + 3);
    if (marker == 0xC4) {
      for (size_t t = i + 4; t < i + 2 + length;) {
        if (byte(t) >> 4 > 1 || (byte(t) & 15) > 3) break;  // stb refuses the table itself
        size_t codes = 0;
        for (size_t k = 1; k <= 16; ++k) codes += byte(t + k);
        if (codes > 256) return true;
        t += 17 + codes;
      }
    }
    i += 2 + length;
  }
  return false;
}

// The pixel size a PNG, BMP or JPEG header declares, read without stb_image: stb refuses
// a header past its limits (a side over 2^24, or more than 2^30 bytes of pixels) as
// "unknown image type", since it then tries the other formats.
std::optional<std::pair<int64_t, int64_t>> declared_size(std::span<const unsigned char> b) {
  auto be16 = [&](size_t i) { return int64_t{b[i]} << 8 | b[i + 1]; };
  auto be32 = [&](size_t i) { return be16(i) << 16 | be16(i + 2); };
  auto le32 = [&](size_t i) {
    return static_cast<int32_t>(b[i] | b[i + 1] << 8 | b[i + 2] << 16 | uint32_t{b[i + 3]} << 24);
  };
  static constexpr unsigned char kPng[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n',
                                           0,    0,   0,   13,  'I',  'H',  'D',  'R'};
  if (b.size() >= 24 && std::equal(std::begin(kPng), std::end(kPng), b.begin())) return std::pair{be32(16), be32(20)};
  if (b.size() >= 26 && b[0] == 'B' && b[1] == 'M' && le32(14) >= 40)  // BITMAPINFOHEADER or later
    return std::pair{int64_t{le32(18)}, std::abs(int64_t{le32(22)})};  // a negative height is top-down
  if (b.size() >= 2 && b[0] == 0xFF && b[1] == 0xD8) {
    for (size_t i = 2; i + 8 < b.size();) {  // the markers up to the frame header (SOF)
      if (b[i] != 0xFF) return std::nullopt;
      const unsigned char marker = b[i + 1];
      if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC)
        return std::pair{be16(i + 7), be16(i + 5)};
      i += 2 + static_cast<size_t>(be16(i + 2));
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<float> image_to_tensor(const std::string& path, const Shape& shape, const Preprocess& preprocess,
                                   int64_t max_memory) {
  std::string bytes;
  try {
    const InputFile file(path);
    if (file.size() > static_cast<uint64_t>(std::min<int64_t>(max_memory, INT_MAX)))  // stb takes an int length
      throw UsageError(fmt::format("{}: the file is {}: over the memory limit of {} (--max_memory)", path,
                                   format_bytes(static_cast<int64_t>(std::min<uint64_t>(file.size(), INT64_MAX))),
                                   format_bytes(max_memory)));
    bytes = file.read_all();
  } catch (const FileError& e) {
    throw UsageError(e.what());
  }
  return image_to_tensor({reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()}, path, shape, preprocess,
                         max_memory);
}

std::vector<float> image_to_tensor(std::span<const unsigned char> bytes, const std::string& path, const Shape& shape,
                                   const Preprocess& p, int64_t max_memory) {
  if (shape.size() != 4 || (shape[1] != 1 && shape[1] != 3))
    throw UsageError(
        fmt::format("{}: the model input has shape {}; an image fills [N, 1 or 3, H, W]", path, shape_str(shape)));
  const int64_t n = shape[0], channels = shape[1], height = shape[2], width = shape[3];
  for (const auto& [name, values] : {std::pair{"mean", &p.mean}, std::pair{"std", &p.std}})
    if (values->size() != 1 && static_cast<int64_t>(values->size()) != channels)
      throw UsageError(fmt::format("{}: preprocess '{}' has {} values, the input has {} channels", path, name,
                                   values->size(), channels));

  if (bytes.size() > INT_MAX) throw UsageError(fmt::format("{}: cannot read the image (the file is too large)", path));
  const auto length = static_cast<int>(bytes.size());
  if (has_oversized_jpeg_huffman_table(bytes))
    throw UsageError(
        fmt::format("{}: cannot read the image (corrupt JPEG: a Huffman table of more than 256 codes)", path));
  auto too_large = [&](int64_t width, int64_t height) {
    return UsageError(
        fmt::format("{}: cannot read the image (it is {}x{} pixels: too large to decode)", path, width, height));
  };
  int w = 0, h = 0, file_channels = 0;
  if (!stbi_info_from_memory(bytes.data(), length, &w, &h, &file_channels)) {
    const auto size = declared_size(bytes);
    // Beyond stb's limits for some channel count; a header within them is corrupt instead.
    if (size && (size->first > (1 << 24) || size->second > (1 << 24) || size->first * size->second * 4 > (1 << 30)))
      throw too_large(size->first, size->second);
    throw UsageError(fmt::format("{}: cannot read the image ({})", path, stbi_failure_reason()));
  }
  // stb accepts some headers that claim no pixels (a BMP 0 pixels wide); nothing to resize.
  if (w <= 0 || h <= 0) throw UsageError(fmt::format("{}: cannot read the image (it is {}x{} pixels)", path, w, h));
  // Decoding, the float copy and the resized tensor, checked before any is allocated.
  const int64_t pixels_in = int64_t{w} * h;
  MemoryBudget budget(max_memory);
  try {
    budget.reserve(checked_mul({pixels_in, kDecodeBytesPerPixel + 4 * channels}), fmt::format("a {}x{} image", w, h));
    budget.reserve(tensor_bytes(checked_mul({n, channels, height, width}), 8), "its tensor");
  } catch (const OpError& e) {
    throw UsageError(fmt::format("{}: {}", path, e.what()));
  }
  // stb converts to the requested channel count: luma for 1, alpha dropped for 3.
  std::unique_ptr<unsigned char, StbiFree> pixels(
      stbi_load_from_memory(bytes.data(), length, &w, &h, &file_channels, static_cast<int>(channels)));
  if (!pixels && std::string_view(stbi_failure_reason()) == "too large") throw too_large(w, h);
  if (!pixels) throw UsageError(fmt::format("{}: cannot read the image ({})", path, stbi_failure_reason()));

  const size_t src_size = static_cast<size_t>(w) * h * channels;
  std::vector<float> src(src_size);
  for (size_t i = 0; i < src_size; ++i) src[i] = pixels.get()[i] / 255.0f;
  const std::vector<float> resized =
      resize_image(src, w, h, static_cast<int>(channels), static_cast<int>(width), static_cast<int>(height));

  // Interleaved HWC to planar CHW, normalised, repeated for every batch row.
  const int64_t plane = height * width;
  std::vector<float> out(static_cast<size_t>(n * channels * plane));
  for (int64_t c = 0; c < channels; ++c) {
    const float mean = per_channel(p.mean, c), inv_std = 1.0f / per_channel(p.std, c);
    for (int64_t i = 0; i < plane; ++i) out[c * plane + i] = (resized[i * channels + c] - mean) * inv_std;
  }
  for (int64_t b = 1; b < n; ++b) std::copy_n(out.begin(), channels * plane, out.begin() + b * channels * plane);
  return out;
}

void set_image_input(Session& session, const std::string& path, const Preprocess& preprocess) {
  const CompiledModel& m = session.model();
  if (m.input_values().empty())
    throw UsageError(fmt::format("{}: the model has no input for an image", m.graph().source));
  const std::string& input = m.values()[m.input_values()[0]].name;
  session.set_input(input, image_to_tensor(path, session.shape(input), preprocess, m.options().max_memory));
}

std::vector<ClassScore> top_classes(std::span<const float> scores, int k, const Graph& graph) {
  if (!graph.labels.empty() && graph.labels.size() != scores.size())
    throw ModelError(fmt::format("{}: labels file '{}' names {} classes, the output has {} values", graph.source,
                                 graph.labels_file, graph.labels.size(), scores.size()));
  std::vector<int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t top = std::min(order.size(), static_cast<size_t>(std::max(k, 0)));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                    [&](int64_t a, int64_t b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
  std::vector<ClassScore> out;
  for (size_t i = 0; i < top; ++i)
    out.push_back({order[i], scores[order[i]], graph.labels.empty() ? "" : graph.labels[order[i]]});
  return out;
}

nlohmann::json classification_report(const Session& session, const std::string& image, int k) {
  const CompiledModel& m = session.model();
  const std::string& output = m.values()[m.output_values().at(0)].name;
  const Shape& shape = session.shape(output);
  std::span<const float> scores = session.output(output);
  scores = scores.first(scores.size() / static_cast<size_t>(shape.empty() ? 1 : shape[0]));  // batch row 0
  nlohmann::json top = nlohmann::json::array();
  for (const ClassScore& c : top_classes(scores, k, m.graph()))
    top.push_back({{"index", c.index}, {"label", c.label}, {"score", c.score}});
  return {{"image", image}, {"output", output}, {"top", top}};
}

}  // namespace minfer
