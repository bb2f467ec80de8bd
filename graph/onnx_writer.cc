#include "graph/onnx_writer.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>

#include "graph/errors.h"
#include "graph/onnx_tensor.h"

namespace minfer {
namespace {

const onnx::OpSchema& schema_of(const Graph& graph, const Node& node) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type, kOnnxWriterOpset, onnx::ONNX_DOMAIN);
  if (!schema)
    throw ModelError(
        fmt::format("{}: ONNX opset {} has no op of this type", node_context(graph, node), kOnnxWriterOpset));
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

void tensor_to_initializer(const std::string& name, const Tensor& tensor, const std::string& type,
                           onnx::TensorProto& proto) {
  if (type == "tensor(float)" || type == "tensor(int64)" || type == "tensor(bool)") {
    const DataType want = type == "tensor(float)"   ? DataType::kFloat
                          : type == "tensor(int64)" ? DataType::kInt64
                                                    : DataType::kBool;
    if (onnx_data_type(tensor.dtype()) == want) return tensor_to_proto(name, tensor, proto);
  }
  // Another type than the tensor's: an integer-valued float32 tensor (net.json's
  // Reshape shapes), or the narrower integers and bool, which travel in int32_data.
  proto.set_name(name);
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  if (type == "tensor(int64)") {
    proto.set_data_type(onnx::TensorProto::INT64);
    for (int64_t i = 0; i < tensor.size(); ++i) proto.add_int64_data(static_cast<int64_t>(tensor.number(i)));
  } else if (type == "tensor(int32)" || type == "tensor(bool)") {
    proto.set_data_type(type == "tensor(int32)" ? onnx::TensorProto::INT32 : onnx::TensorProto::BOOL);
    for (int64_t i = 0; i < tensor.size(); ++i) proto.add_int32_data(static_cast<int32_t>(tensor.number(i)));
  } else if (type == "tensor(float)") {
    proto.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t i = 0; i < tensor.size(); ++i) proto.add_float_data(static_cast<float>(tensor.number(i)));
  } else {
    throw OpError(fmt::format("initializer '{}': ONNX wants {}, which the writer does not produce", name, type));
  }
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
        } else if constexpr (std::is_same_v<T, Tensor>) {
          a.set_type(onnx::AttributeProto::TENSOR);
          tensor_to_proto(name, v, *a.mutable_t());
        } else {
          a.set_type(onnx::AttributeProto::STRINGS);
          for (const std::string& x : v) a.add_strings(x);
        }
      },
      value);
}

// The index of the schema's input called `name` (Pad's `value` attribute became its
// `constant_value` input), or -1.
int input_index(const onnx::OpSchema& schema, std::string name) {
  if (name == "value") name = "constant_value";
  for (size_t i = 0; i < schema.inputs().size(); ++i)
    if (schema.inputs()[i].GetName() == name) return static_cast<int>(i);
  return -1;
}

// An attribute that later opsets turned into an input (Squeeze's axes, Clip's min and
// max, Pad's pads, Dropout's ratio), as the tensor that input takes.
Tensor attribute_tensor(const AttrValue& value) {
  if (auto* i = std::get_if<int64_t>(&value)) return Tensor(Shape{}, std::vector<int64_t>{*i});
  if (auto* f = std::get_if<double>(&value)) return Tensor(Shape{}, std::vector<float>{static_cast<float>(*f)});
  if (auto* is = std::get_if<std::vector<int64_t>>(&value)) return Tensor({static_cast<int64_t>(is->size())}, *is);
  if (auto* fs = std::get_if<std::vector<double>>(&value))
    return Tensor({static_cast<int64_t>(fs->size())}, std::vector<float>(fs->begin(), fs->end()));
  throw OpError("a string or tensor attribute cannot become an input");
}

void set_value_info(const std::string& name, const TensorType& t, onnx::ValueInfoProto& v) {
  v.set_name(name);
  auto* type = v.mutable_type()->mutable_tensor_type();
  type->set_elem_type(static_cast<int32_t>(onnx_data_type(t.dtype)));
  for (int64_t d : t.shape) type->mutable_shape()->add_dim()->set_dim_value(d);
}

}  // namespace

std::string to_onnx(const Graph& graph, const std::map<std::string, TensorType>& output_types) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.set_producer_name("minfer");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxWriterOpset);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name(graph.name);
  for (const GraphInput& in : graph.inputs) set_value_info(in.name, {in.dtype, in.shape}, *g.add_input());
  for (const std::string& out : graph.outputs) {
    auto type = output_types.find(out);
    if (type == output_types.end())
      throw ModelError(fmt::format("{}: output '{}' has no known type", graph.source, out));
    set_value_info(out, type->second, *g.add_output());
  }

  std::map<std::string, std::string> initializer_types;  // from the first node that reads each
  for (const Node& node : graph.nodes) {
    const onnx::OpSchema& schema = schema_of(graph, node);
    onnx::NodeProto& n = *g.add_node();
    n.set_name(node.name);
    n.set_op_type(node.op_type);
    std::vector<std::string> inputs = node.inputs;
    for (const auto& attribute : node.attrs.all()) {
      const std::string& name = attribute.first;  // plain references: clang 14 cannot capture structured bindings
      const AttrValue& value = attribute.second;
      if (schema.attributes().count(name)) {
        write_attribute(name, value, *n.add_attribute());
        continue;
      }
      const int index = input_index(schema, name);
      if (index < 0) continue;  // an engine-only attribute: ONNX has no word for it
      const std::string tensor = node.name + "/" + name;
      with_node_context(graph, node, [&] {
        tensor_to_initializer(tensor, attribute_tensor(value), input_type(schema, index), *g.add_initializer());
      });
      if (inputs.size() <= static_cast<size_t>(index)) inputs.resize(index + 1);
      inputs[index] = tensor;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      n.add_input(inputs[i]);
      if (graph.initializers.count(inputs[i])) initializer_types.emplace(inputs[i], input_type(schema, i));
    }
    for (const std::string& out : node.outputs) n.add_output(out);
  }
  for (const auto& [name, tensor] : graph.initializers) {
    auto type = initializer_types.find(name);
    try {
      tensor_to_initializer(name, tensor, type == initializer_types.end() ? "tensor(float)" : type->second,
                            *g.add_initializer());
    } catch (const OpError& e) {
      throw ModelError(graph.source + ": " + e.what());
    }
  }
  return model.SerializeAsString();
}

}  // namespace minfer
