// The bad-input catalogue (tests/data/bad_models/catalogue.json): every malformed model,
// image and command line is refused with one line naming the file (or flag) and the
// cause, through the library API and through the command-line tools alike: a non-zero
// exit, nothing on stdout and no output file left behind. The sanitizer build runs the
// same entries, so none may crash or read out of bounds on the way.
//
// Entry fields: "error" (a substring of the message) and either
//  - "file": a model (net.json or ONNX), loaded, compiled and run (engine_bench
//    --model), with optional "image" (engine_bench --image; "names": "image" when the
//    message is about the image), "max_memory" and "check_numerics"; or
//  - "tool" and "args": a command line alone, with {models}, {bad} and {out} (an empty
//    directory for output files, holding "setup_dirs" first) in the arguments and the
//    expected error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/cli_common.h"
#include "engine/engine.h"
#include "tests/cli_test_util.h"
#include "tests/temp_files.h"

namespace minfer::test {
namespace {

namespace fs = std::filesystem;

const std::string kSource = MINFER_SOURCE_DIR;
const std::string kBad = kSource + "/tests/data/bad_models";

struct Entry {
  nlohmann::json json;
  std::string label;  // the test's name
};

std::vector<Entry> catalogue() {
  std::ifstream f(kBad + "/catalogue.json");
  const nlohmann::json entries = nlohmann::json::parse(f);
  std::vector<Entry> out;
  for (const auto& e : entries) {
    std::string label = e.contains("tool") ? e["tool"].get<std::string>() + "_" + e["error"].get<std::string>()
                                           : fs::path(e["file"].get<std::string>()).stem().string();
    if (e.contains("image")) label += "_" + fs::path(e["image"].get<std::string>()).stem().string();
    if (e.contains("max_memory")) label += "_max_memory";
    for (char& c : label)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    out.push_back({e, label.substr(0, 80) + "_" + std::to_string(out.size())});
  }
  return out;
}

std::string path_in_catalogue(const nlohmann::json& e, const char* key) {
  return (fs::path(kBad) / e[key].get<std::string>()).lexically_normal().string();
}

std::string quote(const std::string& arg) {
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// Files under `dir` (recursively): a failed run must leave none.
std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (!e.is_directory()) files.push_back(e.path().string());
  return files;
}

// The message of what the library refuses, or "" if it accepts everything.
std::string api_error(const nlohmann::json& e) {
  try {
    LoadOptions load;
    CompileOptions options;
    if (e.contains("max_memory")) load.max_memory = options.max_memory = parse_byte_size("", e["max_memory"]);
    options.check_numerics = e.value("check_numerics", false);
    Graph graph = load_model(path_in_catalogue(e, "file"), load);
    const Preprocess preprocess = graph.preprocess;
    Session session(compile(std::move(graph), options));
    cli::fill_inputs_deterministic(session);  // the inputs engine_bench gives
    if (e.contains("image")) set_image_input(session, path_in_catalogue(e, "image"), preprocess);
    session.run();
    if (e.contains("image")) classification_report(session, path_in_catalogue(e, "image"), 5);
  } catch (const ModelError& error) {
    return error.what();
  } catch (const UsageError& error) {
    return error.what();
  } catch (const NumericsError& error) {
    return error.what();
  }
  return "";
}

class BadInput : public ::testing::TestWithParam<Entry> {
 protected:
  void SetUp() override { out_ = test::temp_dir("out"); }

  // Runs a tool; checks the exit status, the one line on stderr, the empty stdout and
  // that no output file was left. Returns the message after "<tool>: ".
  std::string run_tool(const std::string& tool, const std::vector<std::string>& args) {
    const std::string binary = tool == "engine_bench"   ? MINFER_ENGINE_BENCH
                               : tool == "engine_check" ? MINFER_ENGINE_CHECK
                                                        : MINFER_ENGINE_CONVERT;
    std::string command = binary;
    for (const std::string& a : args) command += " " + quote(a);
    const CommandResult r = run_command(command);
    EXPECT_NE(r.exit_code, 0) << command;
    EXPECT_NE(r.exit_code, -1) << "killed by a signal: " << command;
    EXPECT_TRUE(r.out.empty()) << "stdout: " << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line: " << r.err;
    EXPECT_EQ(r.err.rfind(tool + ": ", 0), 0u) << r.err;
    EXPECT_EQ(files_in(out_), std::vector<std::string>{}) << "left output files behind: " << command;
    std::string message = r.err.substr(std::min(r.err.size(), tool.size() + 2));
    if (!message.empty() && message.back() == '\n') message.pop_back();
    return message;
  }

  fs::path out_;
};

TEST_P(BadInput, IsRefusedWithOneLineNamingFileAndCause) {
  const nlohmann::json& e = GetParam().json;
  const std::string expected = e["error"];

  if (e.contains("tool")) {
    for (const std::string& dir : e.value("setup_dirs", std::vector<std::string>{})) fs::create_directories(out_ / dir);
    auto expand = [&](const std::string& text) {
      return replace_all(replace_all(replace_all(text, "{models}", kSource + "/models"), "{bad}", kBad), "{out}",
                         out_.string());
    };
    std::vector<std::string> args;
    for (const auto& a : e["args"]) args.push_back(expand(a.get<std::string>()));
    const std::string message = run_tool(e["tool"], args);
    EXPECT_NE(message.find(expand(expected)), std::string::npos) << message;
    for (const std::string& dir : e.value("setup_dirs", std::vector<std::string>{})) fs::remove_all(out_ / dir);
    return;
  }

  const std::string model = path_in_catalogue(e, "file");
  const std::string named = e.value("names", "file") == "image" ? path_in_catalogue(e, "image") : model;
  const std::string message = api_error(e);
  ASSERT_FALSE(message.empty()) << "the library accepted " << model;
  EXPECT_EQ(message.rfind(named + ": ", 0), 0u) << "does not name " << named << " first: " << message;
  EXPECT_NE(message.find(expected), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;

  std::vector<std::string> args = {"--model",         model,
                                   "--num_runs",      "1",
                                   "--warmup_runs",   "0",
                                   "--output",        (out_ / "report.txt").string(),
                                   "--trace",         (out_ / "trace.json").string(),
                                   "--html",          (out_ / "report.html").string(),
                                   "--peak_gflops",   "100",
                                   "--bandwidth_gbs", "10"};
  if (e.contains("image")) args.insert(args.end(), {"--image", path_in_catalogue(e, "image")});
  if (e.contains("max_memory")) args.insert(args.end(), {"--max_memory", e["max_memory"]});
  if (e.value("check_numerics", false)) args.push_back("--check_numerics");
  EXPECT_EQ(run_tool("engine_bench", args), message) << "the tool and the library disagree";
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInput, ::testing::ValuesIn(catalogue()),
                         [](const ::testing::TestParamInfo<Entry>& info) { return info.param.label; });

TEST(BadInputCatalogue, CoversEveryKindOfInput) {
  int models = 0, onnx = 0, images = 0, bench = 0, check = 0, convert = 0;
  for (const Entry& entry : catalogue()) {
    const nlohmann::json& e = entry.json;
    if (e.contains("tool")) {
      const std::string tool = e["tool"];
      (tool == "engine_bench" ? bench : tool == "engine_check" ? check : convert)++;
    } else if (e.contains("image")) {
      ++images;
    } else {
      (fs::path(e["file"].get<std::string>()).extension() == ".onnx" ? onnx : models)++;
    }
  }
  EXPECT_GE(models, 50);
  EXPECT_GE(onnx, 25);
  EXPECT_GE(images, 8);
  EXPECT_GE(bench, 15);
  EXPECT_GE(check, 5);
  EXPECT_GE(convert, 5);
}

}  // namespace
}  // namespace minfer::test
