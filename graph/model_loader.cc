#include "graph/model_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "graph/errors.h"
#include "graph/netjson_loader.h"
#include "graph/onnx_loader.h"

namespace minfer {

namespace {

std::string model_format(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".json" && ext != ".onnx")
    throw ModelError(fmt::format("{}: unknown model format '{}' (expected .json or .onnx)", path, ext));
  return ext;
}

// net.json inputs given values become initializers.
void bind_input_values(Graph& graph, const std::map<std::string, Tensor>& values) {
  for (const auto& entry : values) {
    const std::string& name = entry.first;  // a plain reference: clang 14 cannot capture structured bindings
    auto it =
        std::find_if(graph.inputs.begin(), graph.inputs.end(), [&](const GraphInput& i) { return i.name == name; });
    if (it == graph.inputs.end()) throw UsageError(fmt::format("{}: '{}' is not a graph input", graph.source, name));
    graph.initializers[name] = entry.second;
    graph.inputs.erase(it);
  }
}

}  // namespace

Graph load_model(const std::string& path, const LoadOptions& options) {
  if (model_format(path) == ".onnx")
    return load_onnx(path, options.input_shapes, options.input_values, options.max_memory);
  Graph graph = load_netjson(path, options.max_memory);
  override_input_shapes(graph, options.input_shapes);
  bind_input_values(graph, options.input_values);
  return graph;
}

std::vector<InputSignature> model_inputs(const std::string& path) {
  if (model_format(path) == ".onnx") return onnx_inputs(path);
  std::vector<InputSignature> inputs;
  for (const GraphInput& in : load_netjson(path).inputs)
    inputs.push_back({in.name, true, DataType::kFloat, true, in.shape});
  return inputs;
}

void override_input_shapes(Graph& graph, const std::map<std::string, Shape>& shapes) {
  for (const auto& entry : shapes) {
    const std::string& name = entry.first;  // a plain reference: clang 14 cannot capture structured bindings
    const Shape& shape = entry.second;
    auto it =
        std::find_if(graph.inputs.begin(), graph.inputs.end(), [&](const GraphInput& i) { return i.name == name; });
    if (it == graph.inputs.end()) throw UsageError(fmt::format("{}: '{}' is not a graph input", graph.source, name));
    for (int64_t d : shape)
      if (d <= 0) throw UsageError(fmt::format("input '{}': dimension {} must be positive", name, d));
    it->shape = shape;
  }
}

std::map<std::string, Shape> parse_input_shapes(const std::string& spec) {
  std::map<std::string, Shape> out;
  size_t pos = 0;
  while (pos <= spec.size()) {
    const size_t end = std::min(spec.find(';', pos), spec.size());
    const std::string item = spec.substr(pos, end - pos);
    const size_t colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
      throw UsageError(fmt::format("--input_shape '{}': expected name:d1,d2,...", item));
    Shape shape;
    const std::string dims = item.substr(colon + 1);
    size_t p = 0;
    while (p <= dims.size()) {
      const size_t e = std::min(dims.find(',', p), dims.size());
      const std::string d = dims.substr(p, e - p);
      try {
        size_t used = 0;
        const long long v = std::stoll(d, &used);
        if (used != d.size()) throw std::invalid_argument(d);
        shape.push_back(v);
      } catch (const std::out_of_range&) {
        throw UsageError(fmt::format("--input_shape '{}': {} is beyond the range of 64-bit integers", item, d));
      } catch (const std::exception&) {
        throw UsageError(fmt::format("--input_shape '{}': '{}' is not an integer", item, d));
      }
      p = e + 1;
    }
    out[item.substr(0, colon)] = shape;
    pos = end + 1;
  }
  return out;
}

}  // namespace minfer
