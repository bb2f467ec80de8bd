// The HTML report as a browser shows it: headless Chromium loads the page of a real
// model's report, and the DOM it built and the pixels it drew hold the charts.
// Skipped when Chromium is not installed.
#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
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
                        "<section id=\"summary\"", "<line id=\"roof\"", "class=\"roof memory-roof roof-dram\"",
                        "minfer profile: digits_cnn"})
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

// A script appended to a copy of the page (the page itself has none) that, once
// Chromium has laid it out, lists every table or chart wider than the page's body and
// every section with no height, into a <pre id="layout-check"> the DOM dump shows.
constexpr const char* kLayoutCheck = R"(<script>
const right = document.body.getBoundingClientRect().right + 1;
const bad = [];
for (const e of document.querySelectorAll('table, svg'))
  if (e.getBoundingClientRect().right > right || e.scrollWidth > e.clientWidth + 1)
    bad.push(e.tagName + '.' + (e.id || e.className.baseVal || e.className));
for (const s of document.querySelectorAll('section'))
  if (s.getBoundingClientRect().height < 40) bad.push('empty section ' + s.id);
const out = document.createElement('pre');
out.id = 'layout-check';
out.textContent = 'sections=' + document.querySelectorAll('section').length + ' bad=[' + bad.join(', ') + ']';
document.body.appendChild(out);
</script>
)";

// The layout check's line for `html` rendered 1280 px wide.
std::string layout_check(const std::string& html, const fs::path& dir, const std::string& name,
                         const std::function<int(const fs::path&, const std::string&, const fs::path&)>& chromium) {
  std::string page = html;
  page.insert(page.rfind("</body>"), kLayoutCheck);
  const fs::path file = dir / (name + ".html"), dom_file = dir / (name + "-dom.html");
  std::ofstream(file) << page;
  if (chromium(file, "--window-size=1280,1000 --dump-dom", dom_file) != 0) return "chromium failed";
  const std::string dom = read_file(dom_file);
  const size_t at = dom.find("<pre id=\"layout-check\">");
  if (at == std::string::npos) return "no layout check in the DOM";
  const size_t begin = dom.find('>', at) + 1;
  return dom.substr(begin, dom.find("</pre>", begin) - begin);
}

// The page a teacher hands out: every section of the text report is there, with
// something in it, and nothing is wider than the page at 1280 px (names wrap, no
// table hides columns behind a scrollbar).
TEST_F(ChromiumTest, EverySectionRendersAndNoTableOverflows) {
  const nlohmann::json r = digits_report("mobilenet_v1.json");
  const std::string html = format_html(r);
  for (const char* id : {"summary", "op-times", "roofline", "memory", "ops", "types", "passes", "pairs", "formulas"})
    EXPECT_NE(html.find(std::string("<section id=\"") + id + "\""), std::string::npos) << id;
  // The one-line pass summary of the text report, and the full names of merged nodes.
  EXPECT_NE(html.find("fold_bn: 27 BatchNormalizations folded: -10,085,376 FLOPs"), std::string::npos);
  EXPECT_NE(html.find("block13_<wbr>pw+<wbr>block13_<wbr>pw_<wbr>bn"), std::string::npos);
  const auto run = [this](const fs::path& page, const std::string& args, const fs::path& out) {
    return chromium(page, args, out);
  };
  EXPECT_EQ(layout_check(html, dir_, "report", run), "sections=9 bad=[]");

  const nlohmann::json c = build_compare_report({"A", "", digits_report("mobilenet_v1.json")},
                                                {"B", "", digits_report("small_cnn.json")}, "interleaved");
  const std::string compare = layout_check(format_compare_html(c), dir_, "compare", run);
  EXPECT_NE(compare.find(" bad=[]"), std::string::npos) << compare;
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
  ASSERT_EQ(chromium(page, "--window-size=1000,1800 --screenshot=" + shot.string(), dir_ / "stdout.txt"), 0)
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
