// Removes Identity and Dropout (inference) nodes by letting readers use their input.
#pragma once

#include "graph/graph.h"
#include "graph/passes/pass_log.h"

namespace minfer {

// An identity whose output is a graph output survives only when its input is a graph
// input or constant (a graph output must be a buffer of its own name then).
PassLog eliminate_identities(Graph& graph);

}  // namespace minfer
