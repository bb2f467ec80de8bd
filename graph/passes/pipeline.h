// The graph passes in their fixed order, each switchable (engine_bench --fold_bn,
// --fuse, --clean). Passes run on a validated graph and keep its outputs unchanged.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "graph/passes/pass_log.h"

namespace minfer {

struct PassOptions {
  bool clean = true;    // identity and dead-node elimination
  bool fold_bn = true;  // BatchNormalization into Conv, ConvTranspose, Gemm
  bool fuse = true;     // activations into the epilogue of Conv, ConvTranspose, Gemm
};

// One graph pass: rewrites the graph in place and logs what it did.
using Pass = PassLog (*)(Graph& graph);

// The passes `options` selects, in their fixed order. The engine runs them one at a
// time, so that it can cost the graph between them.
std::vector<Pass> selected_passes(const PassOptions& options);

}  // namespace minfer
