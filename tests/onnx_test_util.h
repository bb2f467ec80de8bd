// Builds small ONNX models in tests with libonnx's protobuf classes and saves them to a
// temporary directory, so loader and tool tests need no checked-in binary models.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "graph/dtype.h"
#include "graph/shape.h"

namespace minfer::test {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int opset = 13);

  // A dimension of -1 is dynamic (dim_param "N").
  OnnxBuilder& input(const std::string& name, const std::vector<int64_t>& dims, DataType type = DataType::kFloat);
  OnnxBuilder& output(const std::string& name, DataType type = DataType::kFloat);
  OnnxBuilder& initializer(const std::string& name, const Shape& shape, const std::vector<float>& values);
  OnnxBuilder& int_initializer(const std::string& name, const Shape& shape, const std::vector<int64_t>& values);
  onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "");

  onnx::ModelProto& model() { return model_; }
  std::string bytes() const { return model_.SerializeAsString(); }
  // Writes the model to a fresh file in the test's temporary directory; returns its path.
  std::string save(const std::string& file_name) const;

 private:
  onnx::ModelProto model_;
};

void set_attr(onnx::NodeProto& node, const std::string& name, int64_t value);
void set_attr(onnx::NodeProto& node, const std::string& name, float value);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::string& value);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<float>& values);

}  // namespace minfer::test
