// Expands ops/op_list.h into the factory table.
#include <fmt/format.h>

#include <algorithm>

#include "ops/op.h"

namespace minfer {

#define MINFER_OP(name, factory) std::unique_ptr<Op> factory(const Node& node);
#include "ops/op_list.h"
#undef MINFER_OP

namespace {

struct OpEntry {
  const char* name;
  std::unique_ptr<Op> (*make)(const Node&);
};

constexpr OpEntry kOps[] = {
#define MINFER_OP(name, factory) {name, &factory},
#include "ops/op_list.h"
#undef MINFER_OP
};

const OpEntry* find_entry(const std::string& op_type) {
  for (const OpEntry& e : kOps)
    if (op_type == e.name) return &e;
  return nullptr;
}

}  // namespace

std::unique_ptr<Op> create_op(const Node& node) {
  const OpEntry* entry = find_entry(node.op_type);
  if (!entry) throw UnsupportedError(fmt::format("op type '{}' is not supported", node.op_type));
  return entry->make(node);
}

bool is_known_op(const std::string& op_type) {
  return find_entry(op_type) != nullptr;
}

std::vector<std::string> known_ops() {
  std::vector<std::string> names;
  for (const OpEntry& e : kOps) names.emplace_back(e.name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace minfer
