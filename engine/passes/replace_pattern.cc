#include "engine/passes/replace_pattern.h"

namespace minfer {

PassAction replace_pattern(CompileGraph& g, const std::vector<size_t>& nodes, const std::string& op_type,
                           Attributes attrs, std::vector<std::string> inputs, std::vector<bool>& removed) {
  Cost before;
  std::vector<std::string> names;
  for (size_t k : nodes) {
    before += g.cost(k);
    names.push_back(g.node(k).name);
  }
  const size_t last = nodes.back();
  const std::string merged = names.front() + "+" + names.back();
  g.set_op_type(last, op_type, std::move(attrs));
  g.set_inputs(last, std::move(inputs));
  g.set_name(last, merged);
  for (size_t k : nodes)
    if (k != last) removed[k] = true;
  return {"fused", names, merged, "", before, g.cost(last), op_type + " part"};
}

}  // namespace minfer
