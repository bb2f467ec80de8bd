// The graph passes in their fixed order, each switchable (engine_bench --fold_bn,
// --fuse, --clean). Passes rewrite the compile graph and keep its outputs' values.
#pragma once

#include <vector>

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

struct PassOptions {
  bool clean = true;           // identity and dead-node elimination
  bool fold_bn = true;         // channel affines (BatchNormalization) into the weights before them
  bool fuse = true;            // decomposed LayerNormalization and GELU into one op each; x * Sigmoid(x) into Swish
                               // and the like; activations into the epilogue of the op before them; residual
                               // Adds into the Conv before them; an average pool before the 1x1 Conv
                               // whose output it pools
  bool blocked_layout = true;  // consecutive convolutions in NCHWc, with Reorders at the region's edges
};

std::vector<PassLog> run_passes(CompileGraph& graph, const PassOptions& options);

}  // namespace minfer
