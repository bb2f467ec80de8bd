// Removes nodes whose outputs nobody reads, and initializers nobody uses.
#pragma once

#include "graph/graph.h"
#include "graph/passes/pass_log.h"

namespace minfer {

PassLog eliminate_dead_nodes(Graph& graph);

}  // namespace minfer
