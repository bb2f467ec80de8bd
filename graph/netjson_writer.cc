#include "graph/netjson_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "graph/errors.h"
#include "graph/topology.h"

namespace minfer {
namespace {

using nlohmann::ordered_json;

double finite(double v, const Graph& graph, const Node& node, const std::string& name) {
  if (!std::isfinite(v))
    throw ModelError(fmt::format("{}: attribute '{}' holds {}, which net.json cannot represent",
                                 node_context(graph, node), name, v));
  return v;
}

ordered_json attribute_json(const AttrValue& value, const Graph& graph, const Node& node, const std::string& name) {
  return std::visit(
      [&](const auto& v) -> ordered_json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) {
          return finite(v, graph, node, name);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          ordered_json list = ordered_json::array();
          for (double x : v) list.push_back(finite(x, graph, node, name));
          return list;
        } else if constexpr (std::is_same_v<T, Tensor>) {
          throw ModelError(fmt::format("{}: attribute '{}' is a tensor, which net.json cannot represent",
                                       node_context(graph, node), name));
        } else {
          return v;
        }
      },
      value);
}

// One line per top-level key, and per input, initializer and node: readable and diffable.
std::string format_document(const ordered_json& doc) {
  std::string out = "{\n";
  size_t key_index = 0;
  for (const auto& [key, value] : doc.items()) {
    // fmt rather than operator+: GCC 12 at -O3 sees a false overflow in " " + string&&.
    out += fmt::format(" {}: ", ordered_json(key).dump());
    if ((value.is_array() || value.is_object()) && !value.empty() && key != "outputs") {
      out += value.is_array() ? "[\n" : "{\n";
      size_t i = 0;
      for (const auto& [k, v] : value.items()) {
        out += "  " + (value.is_object() ? ordered_json(k).dump() + ": " : std::string()) + v.dump();
        out += ++i < value.size() ? ",\n" : "\n";
      }
      out += value.is_array() ? " ]" : " }";
    } else {
      out += value.dump();
    }
    out += ++key_index < doc.size() ? ",\n" : "\n";
  }
  return out + "}\n";
}

// net.json's tensors are float32: integers (Reshape's shape, axes) must convert exactly.
std::vector<float> float32_values(const Graph& graph, const std::string& name, const Tensor& tensor) {
  std::vector<float> out(static_cast<size_t>(tensor.size()));
  for (int64_t i = 0; i < tensor.size(); ++i) {
    const double v = tensor.number(i);
    out[i] = static_cast<float>(v);
    if (tensor.dtype() != DType::kFloat32 && static_cast<double>(out[i]) != v)
      throw ModelError(
          fmt::format("{}: initializer '{}' holds the {} value {}, which net.json's float32 cannot "
                      "represent exactly",
                      graph.source, name, dtype_name(tensor.dtype()), v));
  }
  return out;
}

}  // namespace

NetJsonFiles to_netjson(const Graph& graph, const std::string& weights_file) {
  build_topology(graph);  // refuses a malformed graph (no outputs, a cycle, a dangling input), as to_onnx does
  NetJsonFiles files;
  ordered_json doc;
  doc["format"] = "net.json";
  doc["version"] = 1;
  doc["name"] = graph.name;
  doc["inputs"] = ordered_json::array();
  for (const GraphInput& in : graph.inputs) {
    if (in.dtype != DType::kFloat32)
      throw ModelError(fmt::format("{}: input '{}' is {}; net.json's inputs are float32", graph.source, in.name,
                                   dtype_name(in.dtype)));
    doc["inputs"].push_back({{"name", in.name}, {"shape", in.shape}});
  }
  doc["outputs"] = graph.outputs;

  ordered_json inits = ordered_json::object();
  for (const auto& [name, tensor] : graph.initializers) {
    ordered_json t;
    t["shape"] = tensor.shape();
    const std::vector<float> values = float32_values(graph, name, tensor);
    const bool all_finite = std::all_of(values.begin(), values.end(), [](float x) { return std::isfinite(x); });
    if (values.size() <= kInlineElements && all_finite) {
      t["data"] = values;  // floats print with enough digits to read back exactly
    } else {
      t["offset"] = files.weights.size();
      files.weights.append(reinterpret_cast<const char*>(values.data()), 4 * values.size());
    }
    inits[name] = std::move(t);
  }
  if (!files.weights.empty()) doc["weights_file"] = weights_file;
  doc["initializers"] = std::move(inits);

  doc["nodes"] = ordered_json::array();
  for (const Node& node : graph.nodes) {
    ordered_json n;
    n["name"] = node.name;
    n["op"] = node.op_type;
    n["inputs"] = node.inputs;
    n["outputs"] = node.outputs;
    if (!node.attrs.all().empty()) {
      ordered_json attrs = ordered_json::object();
      for (const auto& [name, value] : node.attrs.all()) attrs[name] = attribute_json(value, graph, node, name);
      n["attrs"] = std::move(attrs);
    }
    doc["nodes"].push_back(std::move(n));
  }
  files.json = format_document(doc);
  return files;
}

}  // namespace minfer
