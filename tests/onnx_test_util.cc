#include "tests/onnx_test_util.h"

#include "tests/temp_files.h"

namespace minfer::test {

OnnxBuilder::OnnxBuilder(int opset) {
  model_.set_ir_version(7);
  auto* o = model_.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  model_.mutable_graph()->set_name("test_graph");
}

OnnxBuilder& OnnxBuilder::input(const std::string& name, const std::vector<int64_t>& dims, DataType type) {
  auto* v = model_.mutable_graph()->add_input();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(static_cast<int32_t>(type));
  for (int64_t d : dims) {
    auto* dim = t->mutable_shape()->add_dim();
    if (d < 0)
      dim->set_dim_param("N");
    else
      dim->set_dim_value(d);
  }
  return *this;
}

OnnxBuilder& OnnxBuilder::output(const std::string& name, DataType type) {
  auto* v = model_.mutable_graph()->add_output();
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(type));
  return *this;
}

OnnxBuilder& OnnxBuilder::initializer(const std::string& name, const Shape& shape, const std::vector<float>& values) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
  return *this;
}

OnnxBuilder& OnnxBuilder::int_initializer(const std::string& name, const Shape& shape,
                                          const std::vector<int64_t>& values) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : shape) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return *this;
}

onnx::NodeProto& OnnxBuilder::node(const std::string& op_type, const std::vector<std::string>& inputs,
                                   const std::vector<std::string>& outputs, const std::string& name) {
  auto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op_type);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

std::string OnnxBuilder::save(const std::string& file_name) const {
  const std::string path = temp_dir("models") + "/" + file_name;
  write_file(path, bytes());
  return path;
}

namespace {
onnx::AttributeProto& add(onnx::NodeProto& node, const std::string& name, onnx::AttributeProto::AttributeType type) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return *a;
}
}  // namespace

void set_attr(onnx::NodeProto& node, const std::string& name, int64_t value) {
  add(node, name, onnx::AttributeProto::INT).set_i(value);
}
void set_attr(onnx::NodeProto& node, const std::string& name, float value) {
  add(node, name, onnx::AttributeProto::FLOAT).set_f(value);
}
void set_attr(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  add(node, name, onnx::AttributeProto::STRING).set_s(value);
}
void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  auto& a = add(node, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
}
void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<float>& values) {
  auto& a = add(node, name, onnx::AttributeProto::FLOATS);
  for (float v : values) a.add_floats(v);
}

}  // namespace minfer::test
