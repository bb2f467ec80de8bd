#include "graph/onnx_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "graph/errors.h"
#include "graph/input_file.h"
#include "graph/onnx_tensor.h"

namespace minfer {
namespace {

onnx::ModelProto parse_model(const std::string& bytes, const std::string& source) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    throw ModelError(source + ": not an ONNX model (the protobuf does not parse: truncated or corrupt file?)");
  if (!model.has_graph()) throw ModelError(source + ": the model has no graph");
  return model;
}

onnx::AttributeProto::AttributeType attribute_type(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  // IR version 1 models may leave the type out; the field that is set tells it.
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.floats_size()) return onnx::AttributeProto::FLOATS;
  if (a.ints_size()) return onnx::AttributeProto::INTS;
  if (a.strings_size()) return onnx::AttributeProto::STRINGS;
  return onnx::AttributeProto::UNDEFINED;
}

Attributes convert_attributes(const onnx::NodeProto& proto, const std::string& dir, MemoryBudget& budget) {
  Attributes out;
  for (const onnx::AttributeProto& a : proto.attribute()) {
    const std::string& name = a.name();
    if (!a.ref_attr_name().empty())
      throw UnsupportedError(
          fmt::format("attribute '{}' refers to a function attribute, which is not supported", name));
    const auto type = attribute_type(a);
    switch (type) {
      case onnx::AttributeProto::FLOAT: out.set(name, static_cast<double>(a.f())); break;
      case onnx::AttributeProto::INT: out.set(name, static_cast<int64_t>(a.i())); break;
      case onnx::AttributeProto::STRING: out.set(name, a.s()); break;
      case onnx::AttributeProto::FLOATS:
        out.set(name, std::vector<double>(a.floats().begin(), a.floats().end()));
        break;
      case onnx::AttributeProto::INTS: out.set(name, std::vector<int64_t>(a.ints().begin(), a.ints().end())); break;
      case onnx::AttributeProto::STRINGS:
        out.set(name, std::vector<std::string>(a.strings().begin(), a.strings().end()));
        break;
      case onnx::AttributeProto::TENSOR: try { out.set(name, tensor_from_proto(a.t(), dir, &budget));
        } catch (const UnsupportedError& e) {
          throw UnsupportedError(fmt::format("attribute '{}': {}", name, e.what()));
        } catch (const OpError& e) {
          throw OpError(fmt::format("attribute '{}': {}", name, e.what()));
        }
        break;
      default:
        throw UnsupportedError(fmt::format("attribute '{}' has type {}, which is not supported", name,
                                           onnx::AttributeProto::AttributeType_Name(type)));
    }
  }
  return out;
}

// Reads the file's graph as written: nodes, attributes, typed inputs and the
// initializers something reads. What the nodes compute is the engine's business
// (folding, opset upgrades, shapes): this layer knows no op.
class OnnxImporter {
 public:
  OnnxImporter(std::string source, std::string dir, const std::map<std::string, Shape>& input_shapes,
               const std::map<std::string, Tensor>& input_values, int64_t max_memory)
      : path_(std::move(source)),
        dir_(std::move(dir)),
        input_shapes_(input_shapes),
        input_values_(input_values),
        budget_(max_memory) {}

  Graph run(std::string bytes) {
    model_ = parse_model(bytes, path_);
    std::string().swap(bytes);
    onnx::GraphProto& g = *model_.mutable_graph();
    graph_.source = path_;
    graph_.name = g.name().empty() ? std::filesystem::path(path_).stem().string() : g.name();
    if (model_.ir_version() > kMaxOnnxIrVersion)
      unsupported(fmt::format("the model's IR version {} is newer than the engine supports (at most {})",
                              model_.ir_version(), kMaxOnnxIrVersion));
    const std::optional<int64_t> opset = default_opset();
    if (opset && *opset > kMaxOnnxOpset)
      unsupported(
          fmt::format("the model's opset {} (of the default domain) is newer than the engine supports (at most {})",
                      *opset, kMaxOnnxOpset));
    if (opset && *opset < 1) fail(fmt::format("the model's opset {} (of the default domain) is not a version", *opset));
    graph_.opset = opset ? static_cast<int>(*opset) : -1;
    if (g.sparse_initializer_size() > 0) unsupported("sparse initializers are not supported");
    for (onnx::TensorProto& t : *g.mutable_initializer()) {
      if (initializers_.count(t.name())) fail(fmt::format("initializer '{}' is defined twice", t.name()));
      for (int64_t d : t.dims())
        if (d < 0) fail(fmt::format("initializer '{}' has negative dimension {}", t.name(), d));
      initializers_[t.name()] = &t;
      defined_.insert(t.name());
    }
    import_inputs();
    for (int i = 0; i < g.node_size(); ++i) import_node(i, g.node(i));
    import_outputs();
    decode_initializers();
    return std::move(graph_);
  }

 private:
  [[noreturn]] void fail(const std::string& cause) const { throw ModelError(path_ + ": " + cause); }
  [[noreturn]] void unsupported(const std::string& cause) const { throw UnsupportedModelError(path_ + ": " + cause); }

  // None when the model imports none (it may use other domains only).
  std::optional<int64_t> default_opset() const {
    for (const onnx::OperatorSetIdProto& o : model_.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
    return std::nullopt;
  }

  // The declared element type of a graph input or output; throws for non-tensors.
  DataType tensor_type(const onnx::ValueInfoProto& v, const char* what) const {
    if (v.has_type() && !v.type().has_tensor_type())
      unsupported(
          fmt::format("{} '{}' is not a tensor (sequences, maps and optionals are not supported)", what, v.name()));
    return static_cast<DataType>(v.type().tensor_type().elem_type());
  }

  void import_inputs() {
    std::set<std::string> inputs;
    for (const onnx::ValueInfoProto& v : model_.graph().input()) inputs.insert(v.name());
    for (const auto& [name, shape] : input_shapes_)
      if (!inputs.count(name) || (initializers_.count(name) && !input_values_.count(name)))
        throw UsageError(fmt::format("{}: '{}' is not a graph input", path_, name));
    for (const auto& [name, value] : input_values_)
      if (!inputs.count(name)) throw UsageError(fmt::format("{}: '{}' is not a graph input", path_, name));
    for (const onnx::ValueInfoProto& v : model_.graph().input()) {
      const std::string& name = v.name();
      const DataType type = tensor_type(v, "input");
      if (auto value = input_values_.find(name); value != input_values_.end()) {
        if (type != DataType::kUndefined && engine_dtype(type) != value->second.dtype())
          throw UsageError(fmt::format("{}: input '{}' has type {}, the value given for it {}", path_, name,
                                       data_type_name(type), dtype_name(value->second.dtype())));
        initializers_.erase(name);
        graph_.initializers[name] = value->second;
        defined_.insert(name);
        continue;
      }
      if (initializers_.count(name)) continue;  // older exporters list initializers as inputs too
      const std::optional<DType> dtype = type == DataType::kUndefined ? DType::kFloat32 : engine_dtype(type);
      if (!dtype || type == DataType::kDouble || type == DataType::kFloat16 || type == DataType::kBFloat16)
        unsupported(fmt::format("input '{}' has type {}; the engine's inputs are float32, integers or bool", name,
                                data_type_name(type)));
      graph_.inputs.push_back({name, input_shape(v), *dtype});
      defined_.insert(name);
    }
  }

  Shape input_shape(const onnx::ValueInfoProto& v) const {
    const std::string& name = v.name();
    if (auto it = input_shapes_.find(name); it != input_shapes_.end()) {
      for (int64_t d : it->second)
        if (d <= 0) throw UsageError(fmt::format("input '{}': dimension {} must be positive", name, d));
      return it->second;
    }
    const auto& type = v.type().tensor_type();
    if (!type.has_shape())
      fail(fmt::format("input '{}' has no declared shape; give one with --input_shape {}:d1,d2,...", name, name));
    Shape shape;
    for (int i = 0; i < type.shape().dim_size(); ++i) {
      const auto& dim = type.shape().dim(i);
      if (!dim.has_dim_value() || dim.dim_value() < 0)
        fail(fmt::format(
            "input '{}' has dynamic dimension {} ('{}'); give a static shape with --input_shape {}:d1,d2,...", name, i,
            dim.dim_param(), name));
      if (dim.dim_value() == 0)
        unsupported(fmt::format("input '{}' has an empty dimension; empty tensors are not supported", name));
      shape.push_back(dim.dim_value());
    }
    return shape;
  }

  std::string unique_node_name(std::string name, int index) {
    if (node_names_.count(name)) name += fmt::format("_{}", index);
    while (node_names_.count(name)) name += "_";
    node_names_.insert(name);
    return name;
  }

  void import_node(int index, const onnx::NodeProto& proto) { graph_.nodes.push_back(read_node(index, proto)); }

  // An If's branch, a graph of no inputs that reads values of the scopes around it: its
  // constants decoded now, its nodes read as the graph's are (in a scope that ends with
  // it), appended to graph_.branches; `outer` gets the values it reads from outside.
  int64_t import_branch(const onnx::GraphProto& g, std::vector<std::string>& outer) {
    if (g.input_size() > 0) throw OpError("a branch takes no inputs");
    if (g.sparse_initializer_size() > 0) throw UnsupportedError("sparse initializers are not supported");
    const std::set<std::string> scope = defined_;
    Graph branch;
    std::set<std::string> local;
    for (const onnx::TensorProto& t : g.initializer()) {
      branch.initializers[t.name()] = tensor_from_proto(t, dir_, &budget_);
      defined_.insert(t.name());
      local.insert(t.name());
    }
    auto read = [&](const std::string& name) {
      if (!name.empty() && !local.count(name) && std::find(outer.begin(), outer.end(), name) == outer.end())
        outer.push_back(name);
    };
    for (int i = 0; i < g.node_size(); ++i) {
      Node node = read_node(i, g.node(i));
      for (const std::string& in : node.inputs) read(in);
      local.insert(node.outputs.begin(), node.outputs.end());
      branch.nodes.push_back(std::move(node));
    }
    for (const onnx::ValueInfoProto& v : g.output()) {
      if (!defined_.count(v.name())) throw OpError(fmt::format("branch output '{}' is not defined", v.name()));
      read(v.name());
      read_.insert(v.name());
      branch.outputs.push_back(v.name());
    }
    defined_ = scope;
    graph_.branches.push_back(std::move(branch));
    return static_cast<int64_t>(graph_.branches.size()) - 1;
  }

  Node read_node(int index, const onnx::NodeProto& proto) {
    Node node;
    node.op_type = proto.op_type();
    node.name =
        unique_node_name(proto.name().empty() ? fmt::format("{}_{}", node.op_type, index) : proto.name(), index);
    node.inputs.assign(proto.input().begin(), proto.input().end());
    node.outputs.assign(proto.output().begin(), proto.output().end());
    while (!node.outputs.empty() && node.outputs.back().empty()) node.outputs.pop_back();  // omitted optional outputs
    with_node_context(graph_, node, [&] {
      if (!proto.domain().empty() && proto.domain() != "ai.onnx")
        throw UnsupportedError(fmt::format("domain '{}' is not supported", proto.domain()));
      if (graph_.opset < 0) throw OpError("the model imports no opset of the default ONNX domain");
      for (const std::string& in : node.inputs) {
        if (in.empty()) continue;
        if (!defined_.count(in))
          throw OpError(fmt::format(
              "input '{}' is not a graph input, an initializer or the output of an earlier node (ONNX lists nodes in "
              "topological order)",
              in));
        read_.insert(in);
      }
      for (const std::string& out : node.outputs)
        if (!out.empty() && !defined_.insert(out).second)
          throw OpError(fmt::format("output '{}' is already defined", out));
      if (node.op_type == "If") return read_if(node, proto);
      node.attrs = convert_attributes(proto, dir_, budget_);
    });
    return node;
  }

  // If: the branches imported, then_branch and else_branch their indices in
  // graph_.branches, the values they read from outside appended to the inputs.
  void read_if(Node& node, const onnx::NodeProto& proto) {
    std::vector<std::string> outer;
    for (const onnx::AttributeProto& a : proto.attribute()) {
      if ((a.name() != "then_branch" && a.name() != "else_branch") || !a.has_g())
        throw OpError(fmt::format("unknown attribute '{}'", a.name()));
      node.attrs.set(a.name(), import_branch(a.g(), outer));
    }
    if (!node.attrs.has("then_branch") || !node.attrs.has("else_branch"))
      throw OpError("an If needs then_branch and else_branch");
    if (node.inputs.size() != 1) throw OpError(fmt::format("an If has one input, got {}", node.inputs.size()));
    node.inputs.insert(node.inputs.end(), outer.begin(), outer.end());
  }

  void import_outputs() {
    for (const onnx::ValueInfoProto& v : model_.graph().output()) {
      const std::string& name = v.name();
      tensor_type(v, "output");
      if (!defined_.count(name)) fail(fmt::format("graph output '{}' is not produced by any node", name));
      read_.insert(name);
      graph_.outputs.push_back(name);
    }
  }

  // Initializers nothing reads are left in the file, never decoded.
  void decode_initializers() {
    for (const auto& [name, proto] : initializers_) {
      if (!read_.count(name)) continue;
      try {
        graph_.initializers[name] = tensor_from_proto(*proto, dir_, &budget_);
        std::string().swap(*proto->mutable_raw_data());  // decoded: the file's copy is not needed again
        for (const auto& entry : proto->external_data())
          if (entry.key() == "location")
            graph_.data_files.push_back((std::filesystem::path(dir_) / entry.value()).string());
      } catch (const UnsupportedError& e) {
        unsupported(fmt::format("initializer '{}': {}", name, e.what()));
      } catch (const std::exception& e) {
        fail(fmt::format("initializer '{}': {}", name, e.what()));
      }
    }
  }

  std::string path_, dir_;
  const std::map<std::string, Shape>& input_shapes_;
  const std::map<std::string, Tensor>& input_values_;
  MemoryBudget budget_;  // constants decoded
  onnx::ModelProto model_;
  Graph graph_;
  std::map<std::string, onnx::TensorProto*> initializers_;  // decoded at the end, if read
  std::set<std::string> defined_, read_;
  std::set<std::string> node_names_;
};

}  // namespace

Graph load_onnx(const std::string& path, const std::map<std::string, Shape>& input_shapes,
                const std::map<std::string, Tensor>& input_values, int64_t max_memory) {
  return parse_onnx(read_file_within_limit(path, max_memory), path, std::filesystem::path(path).parent_path().string(),
                    input_shapes, input_values, max_memory);
}

Graph parse_onnx(std::string bytes, const std::string& source, const std::string& base_dir,
                 const std::map<std::string, Shape>& input_shapes, const std::map<std::string, Tensor>& input_values,
                 int64_t max_memory) {
  return OnnxImporter(source, base_dir, input_shapes, input_values, max_memory).run(std::move(bytes));
}

std::vector<InputSignature> onnx_inputs(const std::string& path) {
  const onnx::ModelProto model = parse_model(read_file_within_limit(path, default_max_memory()), path);
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<InputSignature> inputs;
  for (const onnx::ValueInfoProto& v : model.graph().input()) {
    if (initializers.count(v.name())) continue;
    const bool tensor = !v.has_type() || v.type().has_tensor_type();
    InputSignature in{
        v.name(), tensor, static_cast<DataType>(tensor ? v.type().tensor_type().elem_type() : 0), false, {}};
    if (tensor && v.type().tensor_type().has_shape()) {
      in.has_shape = true;
      for (const auto& dim : v.type().tensor_type().shape().dim())
        in.dims.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : -1);
    }
    inputs.push_back(std::move(in));
  }
  return inputs;
}

}  // namespace minfer
