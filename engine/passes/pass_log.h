// What a graph pass did, for the report: each action names the nodes it touched, with
// their cost before the pass and the cost of what they became after it.
#pragma once

#include <string>
#include <vector>

#include "profiler/cost.h"

namespace minfer {

struct PassAction {
  std::string action;              // "folded", "fused", "removed", "kept", "blocked", "inserted", "split",
                                   // "swapped"
  std::vector<std::string> nodes;  // the nodes involved, producer first
  std::string result;              // the node they became (merged name), empty if removed
  std::string reason;              // why (for "kept": why the pass could not apply)
  Cost before, after;              // of `nodes` before the pass, of `result` after it
  std::string op_type;             // of the node acted on: the one folded, fused, removed or kept
                                   // ("<op> part" for the nodes of a decomposition fused into one <op>)
};

struct PassLog {
  std::string pass;
  std::vector<PassAction> actions;
};

}  // namespace minfer
