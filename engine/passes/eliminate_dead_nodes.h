// Removes nodes whose outputs no node and no graph output reads.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

PassLog eliminate_dead_nodes(CompileGraph& graph);

}  // namespace minfer
