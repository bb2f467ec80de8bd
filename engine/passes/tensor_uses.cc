#include "engine/passes/tensor_uses.h"

namespace minfer {

TensorUses::TensorUses(const CompileGraph& graph) {
  for (size_t i = 0; i < graph.size(); ++i) {
    for (const std::string& o : graph.node(i).outputs)
      if (!o.empty()) producer[o] = i;
    for (const std::string& in : graph.node(i).inputs)
      if (!in.empty()) ++reads[in];
  }
}

bool TensorUses::read_once(const CompileGraph& graph, const std::string& tensor) const {
  auto it = reads.find(tensor);
  return it != reads.end() && it->second == 1 && !graph.is_graph_output(tensor);
}

}  // namespace minfer
