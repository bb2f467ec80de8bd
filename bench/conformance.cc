#include "bench/conformance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "engine/session.h"
#include "graph/errors.h"
#include "graph/input_file.h"
#include "graph/model_loader.h"
#include "graph/onnx_tensor.h"
#include "ops/op.h"

namespace minfer::cli {

namespace fs = std::filesystem;

namespace {

// Thrown inside a case to end it early with a SKIP or a FAIL.
struct CaseEnd {
  CaseStatus status;
  std::string message;
};

[[noreturn]] void skip(const std::string& why) {
  throw CaseEnd{CaseStatus::kSkip, why};
}
[[noreturn]] void fail(const std::string& why) {
  throw CaseEnd{CaseStatus::kFail, why};
}

fs::path model_file(const fs::path& dir) {
  for (const char* name : {"model.onnx", "model.json"})
    if (fs::exists(dir / name)) return dir / name;
  return {};
}

// test_data_set_0, _1, ... in numeric order.
std::vector<fs::path> data_sets(const fs::path& dir) {
  std::vector<std::pair<long, fs::path>> sets;
  const std::string prefix = "test_data_set_";
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind(prefix, 0) != 0) continue;
    try {
      sets.emplace_back(std::stol(name.substr(prefix.size())), e.path());
    } catch (const std::exception&) {
      continue;  // not a data set
    }
  }
  std::sort(sets.begin(), sets.end());
  std::vector<fs::path> paths;
  for (auto& [index, path] : sets) paths.push_back(std::move(path));
  return paths;
}

// input_0.pb, input_1.pb, ... (or output_K.pb) until the first gap.
std::vector<TensorFile> read_tensors(const fs::path& set, const char* stem) {
  std::vector<TensorFile> tensors;
  for (int k = 0;; ++k) {
    const fs::path file = set / fmt::format("{}_{}.pb", stem, k);
    if (!fs::exists(file)) return tensors;
    tensors.push_back(read_tensor_file(file.string()));
  }
}

// Types the engine computes exactly as the file means them; float64 and float16 data
// would be computed in float32, which is not what a case about them checks.
bool exact_type(DataType t) {
  return engine_dtype(t) && t != DataType::kDouble && t != DataType::kFloat16 && t != DataType::kBFloat16;
}

// A session value's elements as doubles, whatever its type.
std::vector<double> numbers(const Session::Value& v) {
  std::vector<double> out(static_cast<size_t>(num_elements(v.type.shape)));
  for (size_t i = 0; i < out.size(); ++i) {
    switch (v.type.dtype) {
      case DType::kFloat32: out[i] = reinterpret_cast<const float*>(v.data)[i]; break;
      case DType::kInt64: out[i] = static_cast<double>(reinterpret_cast<const int64_t*>(v.data)[i]); break;
      case DType::kBool: out[i] = reinterpret_cast<const uint8_t*>(v.data)[i]; break;
    }
  }
  return out;
}

std::string index_str(int64_t flat, const Shape& shape) {
  std::vector<int64_t> coords(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("[{}]", fmt::join(coords, ","));
}

// The graph inputs that every node reading them reads as an index (non_data_inputs:
// Resize's scales, a shape, axes) rather than as data: those take a float32 file's
// values as constants too, as the engine needs them before running.
std::set<std::string> index_only_inputs(const Graph& graph, const std::vector<InputSignature>& inputs) {
  std::map<std::string, bool> index_only;
  for (const InputSignature& in : inputs) index_only[in.name] = true;
  for (const Node& node : graph.nodes) {
    OpTraits traits;
    try {
      traits = create_op(node)->traits();
    } catch (const std::exception&) {
      continue;  // compiling the case reports it
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto it = index_only.find(node.inputs[i]);
      if (it != index_only.end() && traits.is_data_input(i)) it->second = false;
    }
  }
  std::set<std::string> names;
  for (const auto& [name, only] : index_only)
    if (only) names.insert(name);
  return names;
}

void run_data_set(const fs::path& model, const fs::path& set, const std::vector<InputSignature>& signature,
                  const CompileOptions& options, const CheckOptions& check) {
  std::vector<fs::path> input_files;
  for (size_t k = 0; fs::exists(set / fmt::format("input_{}.pb", k)); ++k)
    input_files.push_back(set / fmt::format("input_{}.pb", k));
  if (input_files.size() != signature.size())
    fail(fmt::format("the data set has {} inputs, the model {}", input_files.size(), signature.size()));

  LoadOptions load;
  load.max_memory = options.max_memory;
  std::vector<Tensor> tensors;
  for (size_t k = 0; k < signature.size(); ++k) {
    const InputSignature& in = signature[k];
    if (!in.is_tensor) skip(fmt::format("input '{}' is not a tensor", in.name));
    TensorFile file = read_tensor_file(input_files[k].string());
    const DataType declared = in.type == DataType::kUndefined ? file.declared : in.type;
    if (declared != file.declared)
      skip(fmt::format("input '{}' has type {} (its data: {})", in.name, data_type_name(declared),
                       data_type_name(file.declared)));
    if (!exact_type(declared)) skip(fmt::format("input '{}' has type {}", in.name, data_type_name(declared)));
    tensors.push_back(std::move(file.tensor));
  }
  LoadOptions probe = load;  // every input a constant, as it may be empty
  for (size_t k = 0; k < signature.size(); ++k) probe.input_values[signature[k].name] = tensors[k];
  const std::set<std::string> index_only = index_only_inputs(load_model(model.string(), probe), signature);

  std::vector<std::pair<std::string, Tensor>> feeds;  // run-time inputs
  for (size_t k = 0; k < signature.size(); ++k) {
    const InputSignature& in = signature[k];
    Tensor& t = tensors[k];
    if (t.dtype() != DType::kFloat32 || check.constant_inputs || index_only.count(in.name)) {
      load.input_values[in.name] = std::move(t);  // shapes, axes, pads: most ops take these as constants
      continue;
    }
    if (std::any_of(t.shape().begin(), t.shape().end(), [](int64_t d) { return d <= 0; }))
      skip(fmt::format("input '{}' is empty ({}); empty tensors are not supported", in.name, shape_str(t.shape())));
    load.input_shapes[in.name] = t.shape();
    feeds.emplace_back(in.name, std::move(t));
  }

  auto compiled = compile(load_model(model.string(), load), options);
  Session session(compiled);
  for (const auto& [name, data] : feeds) session.set_input(name, data.values<float>());
  session.set_profiling(false);
  session.run();

  const std::vector<TensorFile> expected = read_tensors(set, "output");
  const std::vector<std::string>& outputs = compiled->graph().outputs;
  if (expected.size() != outputs.size())
    fail(fmt::format("the data set has {} outputs, the model {}", expected.size(), outputs.size()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!exact_type(expected[k].declared))
      skip(fmt::format("output '{}' has type {}", outputs[k], data_type_name(expected[k].declared)));
    const Tensor& want_tensor = expected[k].tensor;
    const Session::Value got = session.value(outputs[k]);
    if (got.type.shape != want_tensor.shape())
      fail(fmt::format("output '{}' has shape {}, expected {}", outputs[k], shape_str(got.type.shape),
                       shape_str(want_tensor.shape())));
    std::vector<double> want(static_cast<size_t>(want_tensor.size()));
    for (size_t i = 0; i < want.size(); ++i) want[i] = want_tensor.number(static_cast<int64_t>(i));
    const std::string mismatch = first_mismatch(numbers(got), want, got.type.shape, check.tolerance);
    if (!mismatch.empty()) fail(fmt::format("output '{}' {}", outputs[k], mismatch));
  }
}

}  // namespace

std::vector<fs::path> find_test_cases(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw UsageError(fmt::format("{}: not a directory", dir.string()));
  if (!model_file(dir).empty()) return {dir};
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

std::string case_name(const fs::path& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // a trailing separator
  return p.filename().string();
}

CaseResult run_test_case(const fs::path& dir, const CompileOptions& options, const CheckOptions& check) {
  const fs::path model = model_file(dir);
  // Messages about the case's own model need not repeat its path; a message of several
  // problems becomes one line of them.
  auto shorten = [&](const std::string& message) {
    const std::string prefix = model.string() + ": ";
    std::istringstream lines(message);
    std::string shortened;
    for (std::string line; std::getline(lines, line);) {
      if (!model.empty() && line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
      shortened += (shortened.empty() ? "" : "; ") + line;
    }
    return shortened;
  };
  try {
    if (model.empty()) skip("no model.onnx or model.json");
    const std::vector<fs::path> sets = data_sets(dir);
    if (sets.empty()) skip("no test_data_set_* directory");
    const std::vector<InputSignature> signature = model_inputs(model.string());
    for (const fs::path& set : sets) {
      try {
        run_data_set(model, set, signature, options, check);
      } catch (CaseEnd& end) {
        if (sets.size() > 1) end.message = set.filename().string() + ": " + end.message;
        throw;
      }
    }
    return {CaseStatus::kPass, ""};
  } catch (const CaseEnd& end) {
    return {end.status, end.message};
  } catch (const UnsupportedModelError& e) {
    return {CaseStatus::kSkip, shorten(e.what())};
  } catch (const std::exception& e) {
    return {CaseStatus::kFail, shorten(e.what())};
  }
}

std::string first_mismatch(std::span<const double> got, const std::vector<double>& expected, const Shape& shape,
                           const Tolerance& tolerance) {
  if (got.size() != expected.size()) return fmt::format("has {} values, expected {}", got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], e = expected[i];
    if (g == e || (std::isnan(g) && std::isnan(e))) continue;
    const bool infinite = std::isinf(g) || std::isinf(e);  // only equal infinities match
    if (!infinite && std::fabs(g - e) <= tolerance.atol + tolerance.rtol * std::fabs(e)) continue;
    return fmt::format("index {} {}: got {:.9g}, expected {:.9g}", i, index_str(static_cast<int64_t>(i), shape), g, e);
  }
  return "";
}

std::map<std::string, std::string> read_known_failures(const std::string& path) {
  std::istringstream in;
  try {
    in.str(InputFile(path).read_all());
  } catch (const FileError& e) {
    throw UsageError(fmt::format("--known_failures {}", e.what()));
  }
  std::map<std::string, std::string> known;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t colon = line.find(':');
    auto trim = [](std::string s) {
      const size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    const std::string name = trim(line.substr(0, colon)),
                      reason = colon == std::string::npos ? "" : trim(line.substr(colon + 1));
    if (name.empty() || reason.empty())
      throw UsageError(fmt::format("{}:{}: expected 'case_name: reason'", path, number));
    known[name] = reason;
  }
  return known;
}

}  // namespace minfer::cli
