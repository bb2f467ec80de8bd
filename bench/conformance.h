// engine_check's core: test cases in the ONNX backend-test layout (model.onnx or
// model.json, test_data_set_N/input_K.pb and output_K.pb) run through the engine and
// compared with the expected outputs, in the manner of ONNX Runtime's onnx_test_runner.
#pragma once

#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "engine/compiled_model.h"

namespace minfer::cli {

struct Tolerance {
  double rtol = 1e-3, atol = 1e-5;  // |got - expected| <= atol + rtol * |expected|
};

struct CheckOptions {
  Tolerance tolerance;
  // Every input becomes a load-time constant, so graphs of foldable ops are computed
  // entirely by the constant folder: how engine_check tests the folder.
  bool constant_inputs = false;
};

enum class CaseStatus { kPass, kFail, kSkip };

struct CaseResult {
  CaseStatus status = CaseStatus::kPass;
  std::string message;  // why it failed or was skipped
};

// `dir` itself when it holds a model, else its subdirectories, sorted by name.
std::vector<std::filesystem::path> find_test_cases(const std::filesystem::path& dir);

// A case's name: the name of its directory however the path is spelt ("DIR/", ".").
std::string case_name(const std::filesystem::path& dir);

// Runs every data set of one case. Unsupported ops, types or attributes, and inputs or
// outputs the engine cannot hold (non-float data, empty tensors), are SKIP; any other
// error and any mismatch is FAIL. Integer inputs (shapes, axes, pads) are bound as
// constants at load time, as the engine takes them only as constants.
CaseResult run_test_case(const std::filesystem::path& dir, const CompileOptions& options, const CheckOptions& check);

// The first element outside tolerance, as "index 5 [0,1,1]: got 0.5, expected 0.25";
// empty when all match. NaN matches NaN, infinities match themselves.
std::string first_mismatch(std::span<const double> got, const std::vector<double>& expected, const Shape& shape,
                           const Tolerance& tolerance);

// Known failures: "case_name: reason" per line, '#' starts a comment. Throws UsageError.
std::map<std::string, std::string> read_known_failures(const std::string& path);

}  // namespace minfer::cli
