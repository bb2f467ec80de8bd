#include "graph/onnx_writer.h"

#include <onnx/defs/schema.h>

#include <fmt/format.h>

#include "graph/errors.h"
#include "graph/onnx_tensor.h"
#include "graph/shape_inference.h"
#include "graph/topology.h"

namespace minfer {
namespace {

const onnx::OpSchema& schema_of(const Graph& graph, const Node& node) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type, kOnnxWriterOpset, onnx::ONNX_DOMAIN);
  if (!schema)
    throw ModelError(fmt::format("{}: ONNX opset {} has no op of this type", node_context(graph, node), kOnnxWriterOpset));
  return *schema;
}

// The element type ONNX wants for input `index` of `node`: its formal parameter's own
// type, or float when its type variable allows float, else the variable's first type.
std::string input_type(const onnx::OpSchema& schema, size_t index) {
  const auto& inputs = schema.inputs();
  if (inputs.empty()) return "tensor(float)";
  const std::string& type = inputs[std::min(index, inputs.size() - 1)].GetTypeStr();  // the last may be variadic
  if (type.rfind("tensor(", 0) == 0) return type;
  for (const auto& param : schema.typeConstraintParams()) {
    if (param.type_param_str != type) continue;
    const auto& allowed = param.allowed_type_strs;
    for (const char* preferred : {"tensor(float)", "tensor(int64)"})
      if (std::find(allowed.begin(), allowed.end(), preferred) != allowed.end()) return preferred;
    if (!allowed.empty()) return allowed.front();
  }
  return "tensor(float)";
}

void write_initializer(const std::string& name, const Tensor& tensor, const std::string& type, onnx::TensorProto& proto) {
  if (type == "tensor(float)") return tensor_to_proto(name, tensor, proto);
  int_tensor_to_proto(name, tensor, proto);
  if (type == "tensor(int64)") return;
  // Narrower integer types and bool travel in int32_data.
  const auto values = proto.int64_data();
  proto.clear_int64_data();
  for (int64_t v : values) proto.add_int32_data(static_cast<int32_t>(v));
  if (type == "tensor(int32)") proto.set_data_type(onnx::TensorProto::INT32);
  else if (type == "tensor(bool)") proto.set_data_type(onnx::TensorProto::BOOL);
  else throw ModelError(fmt::format("initializer '{}': ONNX wants {}, which the writer does not produce", name, type));
}

void write_attribute(const std::string& name, const AttrValue& value, onnx::AttributeProto& a) {
  a.set_name(name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          a.set_type(onnx::AttributeProto::INT);
          a.set_i(v);
        } else if constexpr (std::is_same_v<T, double>) {
          a.set_type(onnx::AttributeProto::FLOAT);
          a.set_f(static_cast<float>(v));
        } else if constexpr (std::is_same_v<T, std::string>) {
          a.set_type(onnx::AttributeProto::STRING);
          a.set_s(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          a.set_type(onnx::AttributeProto::INTS);
          for (int64_t x : v) a.add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          a.set_type(onnx::AttributeProto::FLOATS);
          for (double x : v) a.add_floats(static_cast<float>(x));
        } else {
          a.set_type(onnx::AttributeProto::STRINGS);
          for (const std::string& x : v) a.add_strings(x);
        }
      },
      value);
}

void set_value_info(const std::string& name, const Shape& shape, onnx::ValueInfoProto& v) {
  v.set_name(name);
  auto* type = v.mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) type->mutable_shape()->add_dim()->set_dim_value(d);
}

}  // namespace

std::string to_onnx(const Graph& graph) {
  const ShapeMap shapes = infer_shapes(graph, build_topology(graph));
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.set_producer_name("minfer");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxWriterOpset);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name(graph.name);
  for (const GraphInput& in : graph.inputs) set_value_info(in.name, in.shape, *g.add_input());
  for (const std::string& out : graph.outputs) set_value_info(out, shapes.at(out), *g.add_output());

  std::map<std::string, std::string> initializer_types;  // from the first node that reads each
  for (const Node& node : graph.nodes) {
    const onnx::OpSchema& schema = schema_of(graph, node);
    onnx::NodeProto& n = *g.add_node();
    n.set_name(node.name);
    n.set_op_type(node.op_type);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      n.add_input(node.inputs[i]);
      if (graph.initializers.count(node.inputs[i])) initializer_types.emplace(node.inputs[i], input_type(schema, i));
    }
    for (const std::string& out : node.outputs) n.add_output(out);
    for (const auto& [name, value] : node.attrs.all())
      if (schema.attributes().count(name)) write_attribute(name, value, *n.add_attribute());  // engine-only ones stay behind
  }
  for (const auto& [name, tensor] : graph.initializers) {
    auto type = initializer_types.find(name);
    write_initializer(name, tensor, type == initializer_types.end() ? "tensor(float)" : type->second, *g.add_initializer());
  }
  return model.SerializeAsString();
}

}  // namespace minfer
