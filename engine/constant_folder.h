// Constant folding: a node whose inputs are all known before running is computed once,
// at compile time, by binding its op and running the kernel the session would run. One
// interpreter, not two: folding is exactly as right as the kernels.
#pragma once

#include <vector>

#include "graph/memory_limit.h"
#include "ops/op.h"

namespace minfer {

// The node's outputs (an empty tensor for an omitted one). Each output counts against
// `budget` before it is allocated; the kernel's scratch is checked, not counted.
std::vector<Tensor> fold_constant_node(const Op& op, const OpSignature& sig, MemoryBudget& budget);

}  // namespace minfer
