// Images into model inputs: decoding each format, the documented bilinear resize,
// grayscale and RGB, mean/std, batches; bad images; top-k classes.
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/engine.h"
#include "engine/image_resize.h"
#include "tests/op_test_util.h"
#include "tests/temp_files.h"

namespace minfer {
namespace {

namespace fs = std::filesystem;

std::string temp_file(const std::string& name) {
  return (fs::path(test::temp_dir("images")) / name).string();
}

// A w x h RGB image whose channels are distinct functions of the position.
std::vector<unsigned char> test_pixels(int w, int h) {
  std::vector<unsigned char> px(static_cast<size_t>(w * h * 3));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      unsigned char* p = &px[static_cast<size_t>((y * w + x) * 3)];
      p[0] = static_cast<unsigned char>(40 * x + 10);
      p[1] = static_cast<unsigned char>(50 * y + 20);
      p[2] = static_cast<unsigned char>(255 - 30 * (x + y));
    }
  return px;
}

std::string write_png(const std::string& name, int w, int h, const std::vector<unsigned char>& px, int channels = 3) {
  const std::string path = temp_file(name);
  EXPECT_TRUE(stbi_write_png(path.c_str(), w, h, channels, px.data(), w * channels));
  return path;
}

// Bilinear interpolation with half-pixel centres and clamped edges, written out
// independently of stb: output pixel i samples the source at (i + 0.5) * in / out - 0.5.
float bilinear(const std::vector<unsigned char>& px, int w, int h, int c, int ox, int oy, int out_w, int out_h) {
  auto sample = [](int i, int in, int out, int& i0, int& i1, float& t) {
    const float s = std::clamp((i + 0.5f) * in / out - 0.5f, 0.0f, static_cast<float>(in - 1));
    i0 = static_cast<int>(std::floor(s));
    i1 = std::min(i0 + 1, in - 1);
    t = s - i0;
  };
  int x0, x1, y0, y1;
  float tx, ty;
  sample(ox, w, out_w, x0, x1, tx);
  sample(oy, h, out_h, y0, y1, ty);
  auto at = [&](int x, int y) { return px[static_cast<size_t>((y * w + x) * 3 + c)] / 255.0f; };
  return (1 - ty) * ((1 - tx) * at(x0, y0) + tx * at(x1, y0)) + ty * ((1 - tx) * at(x0, y1) + tx * at(x1, y1));
}

TEST(ImageInput, SameSizeIsExactNchwScaledToUnitRange) {
  const auto px = test_pixels(5, 4);
  const std::string path = write_png("exact.png", 5, 4, px);
  const std::vector<float> t = image_to_tensor(path, {1, 3, 4, 5}, Preprocess{});
  ASSERT_EQ(t.size(), 60u);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 5; ++x)
        EXPECT_FLOAT_EQ(t[(c * 4 + y) * 5 + x], px[(y * 5 + x) * 3 + c] / 255.0f) << c << " " << y << " " << x;
  fs::remove(path);
}

TEST(ImageInput, EnlargingIsBilinear) {
  const int w = 4, h = 3, out_w = 10, out_h = 7;
  const auto px = test_pixels(w, h);
  const std::string path = write_png("enlarge.png", w, h, px);
  const std::vector<float> t = image_to_tensor(path, {1, 3, out_h, out_w}, Preprocess{});
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < out_h; ++y)
      for (int x = 0; x < out_w; ++x)
        EXPECT_NEAR(t[(c * out_h + y) * out_w + x], bilinear(px, w, h, c, x, y, out_w, out_h), 1e-5)
            << c << " " << y << " " << x;
  fs::remove(path);
}

TEST(ImageInput, ShrinkingAveragesAUniformImageToItself) {
  std::vector<unsigned char> px(16 * 16 * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = i % 3 == 0 ? 51 : i % 3 == 1 ? 102 : 204;
  const std::string path = write_png("uniform.png", 16, 16, px);
  const std::vector<float> t = image_to_tensor(path, {1, 3, 5, 3}, Preprocess{});
  for (size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(t[i], (i < 15 ? 51 : i < 30 ? 102 : 204) / 255.0f, 1e-5) << i;
  fs::remove(path);
}

TEST(ImageResize, ShrinkingIsATentAsWideAsTheRatio) {
  // 4 -> 2 across: ratio 2, so each output averages the source within 2 pixels of its
  // centre with weights 1 - d/2, the left edge clamped. Centre 0.5: pixels -1 (= 0), 0,
  // 1, 2 weigh 0.25, 0.75, 0.75, 0.25; centre 2.5: pixels 1, 2, 3, 4 (= 3) likewise.
  const std::vector<float> px = {1, 2, 4, 8};
  const std::vector<float> out = resize_image(px, 4, 1, 1, 2, 1);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FLOAT_EQ(out[0], (0.25f * 1 + 0.75f * 1 + 0.75f * 2 + 0.25f * 4) / 2);
  EXPECT_FLOAT_EQ(out[1], (0.25f * 2 + 0.75f * 4 + 0.75f * 8 + 0.25f * 8) / 2);
}

TEST(ImageResize, AnyRatioKeepsAUniformImage) {
  // Ratios on which stb_image_resize v1 asserts (stb issue 1449: 2000 -> 1304), and a
  // photo-to-MobileNet shrink.
  const int sizes[][4] = {{2000, 3, 1304, 2}, {400, 300, 224, 224}, {7, 5, 3, 11}, {1, 1, 5, 4}};
  for (const auto& s : sizes) {
    const std::vector<float> px(static_cast<size_t>(s[0] * s[1] * 3), 0.625f);
    const std::vector<float> out = resize_image(px, s[0], s[1], 3, s[2], s[3]);
    ASSERT_EQ(out.size(), static_cast<size_t>(s[2] * s[3] * 3));
    for (float v : out) ASSERT_NEAR(v, 0.625f, 1e-6) << s[0] << "x" << s[1] << " -> " << s[2] << "x" << s[3];
  }
}

// The documented tent along one axis, written out: output o samples the source at
// (o + 0.5) * in / out - 0.5 with a tent as wide as max(1, in / out), edges clamped.
std::vector<std::vector<std::pair<int, double>>> naive_tent(int in, int out) {
  std::vector<std::vector<std::pair<int, double>>> all(out);
  for (int o = 0; o < out; ++o) {
    const double ratio = double(in) / out, width = std::max(1.0, ratio), centre = (o + 0.5) * ratio - 0.5;
    double total = 0;
    for (int i = int(std::floor(centre - width)); i <= int(std::ceil(centre + width)); ++i)
      if (const double w = 1.0 - std::abs(i - centre) / width; w > 0) {
        all[o].push_back({std::clamp(i, 0, in - 1), w});
        total += w;
      }
    for (auto& [i, w] : all[o]) w /= total;
  }
  return all;
}

TEST(ImageResize, MatchesTheTwoDimensionalTentWhicheverAxisGoesFirst) {
  // Wide-and-short shrinks and a long thin image enlarged across (which the resize does
  // down the long axis first): all equal the double sum over both axes' weights.
  const int sizes[][4] = {{40, 3, 7, 5}, {1, 3000, 29, 37}, {3000, 2, 5, 9}, {9, 7, 13, 4}};
  for (const auto& s : sizes) {
    const int w = s[0], h = s[1], ow = s[2], oh = s[3], c = 2;
    const std::vector<float> px = test::random_values(static_cast<int64_t>(w) * h * c, 5);
    const std::vector<float> out = resize_image(px, w, h, c, ow, oh);
    const auto across = naive_tent(w, ow), down = naive_tent(h, oh);
    ASSERT_EQ(out.size(), static_cast<size_t>(ow * oh * c));
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x)
        for (int k = 0; k < c; ++k) {
          double want = 0;
          for (auto [i, wy] : down[y])
            for (auto [j, wx] : across[x]) want += wy * wx * px[(static_cast<size_t>(i) * w + j) * c + k];
          ASSERT_NEAR(out[(static_cast<size_t>(y) * ow + x) * c + k], want, 1e-4)
              << w << "x" << h << " -> " << ow << "x" << oh << " at " << x << "," << y;
        }
  }
}

TEST(ImageInput, MeanStdPerChannelAndBatchRows) {
  const auto px = test_pixels(3, 2);
  const std::string path = write_png("norm.png", 3, 2, px);
  Preprocess p;
  p.mean = {0.1f, 0.2f, 0.3f};
  p.std = {0.5f, 0.25f, 2.0f};
  const std::vector<float> t = image_to_tensor(path, {2, 3, 2, 3}, p);
  ASSERT_EQ(t.size(), 36u);
  for (int b = 0; b < 2; ++b)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 6; ++i)
        EXPECT_NEAR(t[(b * 3 + c) * 6 + i], (px[i * 3 + c] / 255.0f - p.mean[c]) / p.std[c], 1e-6);
  p.mean = {0.5f};  // one value for every channel
  p.std = {0.5f};
  const std::vector<float> one = image_to_tensor(path, {1, 3, 2, 3}, p);
  EXPECT_NEAR(one[0], (px[0] / 255.0f - 0.5f) / 0.5f, 1e-6);
  fs::remove(path);
}

TEST(ImageInput, GrayscaleForOneChannelModels) {
  // stb's luma: (77 R + 150 G + 29 B) / 256, the ITU-R BT.601 weights in 8 bits.
  const std::vector<unsigned char> px = {255, 0, 0, 0, 255, 0, 0, 0, 255, 200, 100, 50};
  const std::string path = write_png("gray.png", 4, 1, px);
  const std::vector<float> t = image_to_tensor(path, {1, 1, 1, 4}, Preprocess{});
  const int expected[] = {77 * 255 >> 8, 150 * 255 >> 8, 29 * 255 >> 8, (77 * 200 + 150 * 100 + 29 * 50) >> 8};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(t[i], expected[i] / 255.0f, 1.5f / 255) << i;
  // A grayscale file into an RGB model: every channel the same.
  const std::vector<unsigned char> gray = {10, 200};
  const std::string gpath = write_png("gray1.png", 2, 1, gray, 1);
  const std::vector<float> rgb = image_to_tensor(gpath, {1, 3, 1, 2}, Preprocess{});
  for (int c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(rgb[c * 2 + 1], 200 / 255.0f);
  fs::remove(path);
  fs::remove(gpath);
}

TEST(ImageInput, DecodesPngBmpAndJpeg) {
  const int w = 8, h = 6;
  const auto px = test_pixels(w, h);
  const std::string png = write_png("f.png", w, h, px);
  const std::string bmp = temp_file("f.bmp"), jpg = temp_file("f.jpg");
  ASSERT_TRUE(stbi_write_bmp(bmp.c_str(), w, h, 3, px.data()));
  ASSERT_TRUE(stbi_write_jpg(jpg.c_str(), w, h, 3, px.data(), 100));
  const Shape shape{1, 3, h, w};
  const std::vector<float> from_png = image_to_tensor(png, shape, Preprocess{});
  EXPECT_EQ(image_to_tensor(bmp, shape, Preprocess{}), from_png);  // both lossless
  const std::vector<float> from_jpg = image_to_tensor(jpg, shape, Preprocess{});
  double worst = 0;
  for (size_t i = 0; i < from_png.size(); ++i) worst = std::max(worst, std::fabs(double(from_jpg[i]) - from_png[i]));
  EXPECT_LT(worst, 0.1);  // JPEG is lossy, but at quality 100 close
  for (const auto& p : {png, bmp, jpg}) fs::remove(p);
}

void expect_usage_error(const std::function<void()>& f, const std::string& starts, const std::string& contains) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(starts, 0), 0u) << msg;
    EXPECT_NE(msg.find(contains), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(ImageInput, BadImagesAreOneLineErrors) {
  const std::string corrupt = temp_file("corrupt.png");
  {
    // A PNG signature followed by garbage.
    std::ofstream f(corrupt, std::ios::binary);
    f << "\x89PNG\r\n\x1a\n" << std::string(100, 'x');
  }
  expect_usage_error(
      [&] {
        image_to_tensor(corrupt, {1, 3, 4, 4}, Preprocess{});
      },
      corrupt + ": cannot read the image", "(");
  const std::string text = temp_file("text.png");
  std::ofstream(text) << "hello";
  expect_usage_error([&] { image_to_tensor(text, {1, 3, 4, 4}, Preprocess{}); }, text + ": cannot read the image", "");
  expect_usage_error(
      [&] {
        image_to_tensor("/nonexistent.png", {1, 3, 4, 4}, Preprocess{});
      },
      "/nonexistent.png: cannot open the file (No such file or directory)", "");
  const std::string good = write_png("good.png", 2, 2, test_pixels(2, 2));
  expect_usage_error(
      [&] {
        image_to_tensor(good, {1, 2, 4, 4}, Preprocess{});
      },
      good + ": the model input has shape", "[N, 1 or 3, H, W]");
  expect_usage_error([&] { image_to_tensor(good, {1, 3, 4}, Preprocess{}); }, good, "shape 1x3x4");
  Preprocess two;
  two.mean = {0.1f, 0.2f};
  expect_usage_error(
      [&] {
        image_to_tensor(good, {1, 3, 4, 4}, two);
      },
      good, "preprocess 'mean' has 2 values, the input has 3 channels");
  for (const auto& p : {corrupt, text, good}) fs::remove(p);
}

TEST(ImageInput, AHeaderPastTheDecodersLimitsIsTooLargeNamingItsSize) {
  // Once "unknown image type": stb_image refuses the header, then tries other formats.
  auto be = [](uint32_t v, int bytes) {
    std::string s;
    for (int i = bytes - 1; i >= 0; --i) s += static_cast<char>(v >> (8 * i) & 0xFF);
    return s;
  };
  const std::string png = std::string("\x89PNG\r\n\x1a\n") + be(13, 4) + "IHDR" + be(100000, 4) + be(100000, 4) +
                          std::string("\x08\x02\0\0\0", 5) + be(0, 4);
  // A baseline frame header (SOF0) of 3 components, 65535 x 65535.
  const std::string jpeg = std::string("\xff\xd8\xff\xc0") + be(17, 2) + "\x08" + be(65535, 2) + be(65535, 2) +
                           std::string("\x03\x01\x11\0\x02\x11\0\x03\x11\0\xff\xd9", 12);
  struct Case {
    std::string name, bytes, size;
  };
  for (const Case& c : {Case{"huge.png", png, "100000x100000"}, Case{"huge.jpg", jpeg, "65535x65535"}}) {
    const auto* data = reinterpret_cast<const unsigned char*>(c.bytes.data());
    expect_usage_error(
        [&] {
          image_to_tensor(std::span(data, c.bytes.size()), c.name, {1, 3, 4, 4}, Preprocess{}, int64_t{1} << 40);
        },
        c.name + ": cannot read the image (it is " + c.size + " pixels: too large to decode)", "");
  }
}

TEST(TopClasses, HighestFirstTiesByIndexWithLabels) {
  Graph g;
  g.source = "m.json";
  const std::vector<float> scores = {0.1f, 0.4f, 0.05f, 0.4f, 0.05f};
  auto top = top_classes(scores, 3, g);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].index, 1);
  EXPECT_EQ(top[1].index, 3);
  EXPECT_EQ(top[2].index, 0);
  EXPECT_FLOAT_EQ(top[2].score, 0.1f);
  EXPECT_EQ(top[0].label, "");
  EXPECT_EQ(top_classes(scores, 10, g).size(), 5u);
  g.labels = {"a", "b", "c", "d", "e"};
  g.labels_file = "labels.txt";
  EXPECT_EQ(top_classes(scores, 1, g)[0].label, "b");
  g.labels.pop_back();
  try {
    top_classes(scores, 1, g);
    ADD_FAILURE() << "labels of the wrong count accepted";
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(), "m.json: labels file 'labels.txt' names 4 classes, the output has 5 values");
  }
}

}  // namespace
}  // namespace minfer
