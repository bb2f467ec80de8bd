// The HTML report as a browser shows it: headless Chromium loads the page of a real
// model's report, and the DOM it built and the pixels it drew hold the charts.
// Skipped when Chromium is not installed.
#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "engine/engine.h"
#include "profiler/compare_report.h"
#include "tests/profiler/test_machine.h"
#include "tests/temp_files.h"

namespace minfer {
namespace {

namespace fs = std::filesystem;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ChromiumTest : public testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v chromium > /dev/null 2>&1") != 0)
      GTEST_SKIP() << "chromium is not installed (apt-get install chromium, or scripts/install_deps.sh): "
                      "the HTML report was not rendered in a browser";
    dir_ = test::temp_dir("chromium");
  }

  // Runs headless Chromium on `page` with `args` and a fresh profile; stdout to `out`.
  int chromium(const fs::path& page, const std::string& args, const fs::path& out) {
    const std::string cmd =
        "timeout 180 chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
        "--disable-component-update --disable-sync --no-first-run --user-data-dir=" +
        (dir_ / "profile").string() + " " + args + " file://" + page.string() + " > " + out.string() + " 2> " +
        (dir_ / "chromium.log").string();
    return std::system(cmd.c_str());
  }

  fs::path dir_;
};

nlohmann::json digits_report(const std::string& model_file = "digits_cnn.json") {
  auto model = compile(load_model(std::string(MINFER_SOURCE_DIR) + "/models/" + model_file));
  Session s(model);
  for (int i = 0; i < 3; ++i) s.run();
  return profile_report(s, 0, test::test_machine());
}

TEST_F(ChromiumTest, RendersTheChartsOfARealReport) {
  const nlohmann::json r = digits_report();
  const fs::path page = dir_ / "report.html";
  std::ofstream(page) << format_html(r);

  const fs::path dom_file = dir_ / "dom.html";
  ASSERT_EQ(chromium(page, "--dump-dom", dom_file), 0) << read_file(dir_ / "chromium.log");
  const std::string dom = read_file(dom_file);
  for (const char* s : {"<svg id=\"op-time-chart\"", "<svg id=\"roofline-chart\"", "<svg id=\"memory-chart\"",
                        "<section id=\"summary\"", "<polyline id=\"roof\"", "minfer profile: digits_cnn"})
    EXPECT_NE(dom.find(s), std::string::npos) << s;
  size_t with_flops = 0;
  for (const auto& op : r["ops"]) with_flops += op["flops"].get<int64_t>() > 0;
  EXPECT_EQ(count(dom, "<rect class=\"op-bar\""), r["ops"].size());
  EXPECT_EQ(count(dom, "<circle class=\"op-point\""), with_flops);
  EXPECT_EQ(count(dom, "<rect class=\"buffer"), r["memory_plan"]["buffers"].size());

  const fs::path shot = dir_ / "shot.png";
  ASSERT_EQ(chromium(page, "--window-size=1000,2400 --screenshot=" + shot.string(), dir_ / "stdout.txt"), 0)
      << read_file(dir_ / "chromium.log");
  int w = 0, h = 0, c = 0;
  std::unique_ptr<unsigned char, decltype(&stbi_image_free)> px(stbi_load(shot.c_str(), &w, &h, &c, 3),
                                                                stbi_image_free);
  ASSERT_TRUE(px) << "no screenshot";
  EXPECT_EQ(w, 1000);
  EXPECT_EQ(h, 2400);
  // The first op kind's colour (#4e79a7, Conv/regular) fills its bars, swatches and points;
  // the page is mostly white with text and charts on it.
  size_t first_colour = 0, non_white = 0;
  for (int i = 0; i < w * h; ++i) {
    const unsigned char* p = px.get() + 3 * i;
    first_colour += std::abs(p[0] - 0x4e) < 6 && std::abs(p[1] - 0x79) < 6 && std::abs(p[2] - 0xa7) < 6;
    non_white += p[0] < 200 || p[1] < 200 || p[2] < 200;
  }
  EXPECT_GT(first_colour, 300u);
  EXPECT_GT(non_white, static_cast<size_t>(w * h / 50));
}

TEST_F(ChromiumTest, RendersTheCompareView) {
  const nlohmann::json c = build_compare_report({"A", "", digits_report("small_cnn.json")},
                                                {"B", "", digits_report("digits_cnn.json")}, "interleaved");
  const fs::path page = dir_ / "compare.html";
  std::ofstream(page) << format_compare_html(c);

  const fs::path dom_file = dir_ / "dom.html";
  ASSERT_EQ(chromium(page, "--dump-dom", dom_file), 0) << read_file(dir_ / "chromium.log");
  const std::string dom = read_file(dom_file);
  for (const char* s : {"<svg id=\"compare-ratio-chart\"", "<svg id=\"compare-op-type-chart\"",
                        "<svg id=\"a-roofline-chart\"", "<svg id=\"b-roofline-chart\"", "<svg id=\"b-memory-chart\"",
                        "<section id=\"compare\"", "minfer compare: A: small_cnn against B: digits_cnn"})
    EXPECT_NE(dom.find(s), std::string::npos) << s;
  EXPECT_EQ(count(dom, "<rect class=\"type-bar\""), 2 * c["op_types"].size());
  EXPECT_EQ(count(dom, "<rect class=\"op-bar\""),
            c["sides"][0]["report"]["ops"].size() + c["sides"][1]["report"]["ops"].size());

  // The top of the page holds the comparison: its bars in A's blue and B's orange.
  const fs::path shot = dir_ / "compare.png";
  ASSERT_EQ(chromium(page, "--window-size=1000,1400 --screenshot=" + shot.string(), dir_ / "stdout.txt"), 0)
      << read_file(dir_ / "chromium.log");
  int w = 0, h = 0, ch = 0;
  std::unique_ptr<unsigned char, decltype(&stbi_image_free)> px(stbi_load(shot.c_str(), &w, &h, &ch, 3),
                                                                stbi_image_free);
  ASSERT_TRUE(px) << "no screenshot";
  size_t blue = 0, orange = 0;
  for (int i = 0; i < w * h; ++i) {
    const unsigned char* p = px.get() + 3 * i;
    blue += std::abs(p[0] - 0x4e) < 6 && std::abs(p[1] - 0x79) < 6 && std::abs(p[2] - 0xa7) < 6;
    orange += std::abs(p[0] - 0xf2) < 6 && std::abs(p[1] - 0x8e) < 6 && std::abs(p[2] - 0x2b) < 6;
  }
  EXPECT_GT(blue, 300u);
  EXPECT_GT(orange, 300u);
}

}  // namespace
}  // namespace minfer
