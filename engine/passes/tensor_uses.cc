#include "engine/passes/tensor_uses.h"

namespace minfer {

TensorUses::TensorUses(const CompileGraph& graph) {
  for (size_t i = 0; i < graph.size(); ++i) {
    for (const std::string& o : graph.node(i).outputs)
      if (!o.empty()) producer[o] = i;
    for (const std::string& in : graph.node(i).inputs)
      if (!in.empty()) {
        ++reads[in];
        readers[in].push_back(i);
      }
  }
}

bool TensorUses::read_once(const CompileGraph& graph, const std::string& tensor) const {
  auto it = reads.find(tensor);
  return it != reads.end() && it->second == 1 && !graph.is_graph_output(tensor);
}

std::optional<size_t> TensorUses::producer_of_type(const CompileGraph& graph, const std::string& tensor,
                                                   const char* op_type) const {
  auto p = producer.find(tensor);
  if (p == producer.end()) return std::nullopt;
  const Node& n = graph.node(p->second);
  if (n.op_type != op_type || n.outputs.size() != 1) return std::nullopt;
  return p->second;
}

std::optional<size_t> TensorUses::only_reader_of_type(const CompileGraph& graph, const std::string& tensor,
                                                      const char* op_type) const {
  if (!read_once(graph, tensor)) return std::nullopt;
  const size_t reader = readers.at(tensor)[0];
  if (graph.node(reader).op_type != op_type || graph.node(reader).outputs.size() != 1) return std::nullopt;
  return reader;
}

const std::string* other_input(const Node& n, const std::string& one) {
  if (n.inputs.size() != 2) return nullptr;
  if (n.inputs[0] == one) return &n.inputs[1];
  if (n.inputs[1] == one) return &n.inputs[0];
  return nullptr;
}

std::optional<float> scalar_constant(const CompileGraph& graph, const std::string& tensor) {
  const Tensor* t = graph.constant(tensor);
  if (!t || t->dtype() != DType::kFloat32 || t->size() != 1) return std::nullopt;
  return t->values<float>()[0];
}

}  // namespace minfer
