#include "graph/passes/pipeline.h"

#include "graph/passes/eliminate_dead_nodes.h"
#include "graph/passes/eliminate_identities.h"
#include "graph/passes/fold_batch_norm.h"
#include "graph/passes/fuse_activations.h"

namespace minfer {

std::vector<Pass> selected_passes(const PassOptions& options) {
  std::vector<Pass> passes;
  if (options.clean) {
    passes.push_back(&eliminate_identities);
    passes.push_back(&eliminate_dead_nodes);
  }
  if (options.fold_bn) passes.push_back(&fold_batch_norm);
  // After folding, so a Conv -> BatchNormalization -> Relu chain fuses into one node.
  if (options.fuse) passes.push_back(&fuse_activations);
  return passes;
}

}  // namespace minfer
