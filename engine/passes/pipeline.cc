#include "engine/passes/pipeline.h"

#include "engine/passes/blocked_layout.h"
#include "engine/passes/eliminate_dead_nodes.h"
#include "engine/passes/eliminate_identities.h"
#include "engine/passes/fold_batch_norm.h"
#include "engine/passes/fuse_activations.h"
#include "engine/passes/fuse_channel_scale.h"
#include "engine/passes/fuse_gelu.h"
#include "engine/passes/fuse_layer_norm.h"
#include "engine/passes/fuse_matmul_bias.h"
#include "engine/passes/fuse_pads.h"
#include "engine/passes/fuse_residual_add.h"
#include "engine/passes/fuse_self_gates.h"
#include "engine/passes/pool_before_pointwise.h"
#include "engine/passes/thread_splits.h"

namespace minfer {

std::vector<PassLog> run_passes(CompileGraph& graph, const PassOptions& options) {
  std::vector<PassLog> logs;
  if (options.clean) {
    logs.push_back(eliminate_identities(graph));
    logs.push_back(eliminate_dead_nodes(graph));
  }
  if (options.fold_bn) logs.push_back(fold_batch_norm(graph));
  // After folding, so a Conv -> BatchNormalization -> Relu chain fuses into one node;
  // decompositions and self-gates first, so the Gelu, Swish and HardSwish they make fuse too.
  if (options.fuse) {
    // First, after folding: a 1x1 Conv (a BatchNormalization folded in) and the average
    // pool after it swap before anything fuses into the Conv.
    logs.push_back(pool_before_pointwise(graph));
    logs.push_back(fuse_layer_norm(graph));
    logs.push_back(fuse_gelu(graph));
    logs.push_back(fuse_self_gates(graph));
    // Before activations, so that a linear layer's activation goes into its MatMul.
    logs.push_back(fuse_matmul_bias(graph));
    logs.push_back(fuse_activations(graph));
    // After activations, so a residual Add + Relu goes into the Conv before it whole.
    logs.push_back(fuse_residual_add(graph));
    // A squeeze-and-excitation gate into the 1x1 Conv that reads the scaled tensor.
    logs.push_back(fuse_channel_scale(graph));
    // A Pad of zeros into the Conv or AveragePool reading it.
    logs.push_back(fuse_pads(graph));
  }
  // After the fusions, so that a 1x1 Conv's reader is the depthwise Conv itself.
  logs.push_back(thread_splits(graph));
  // Last: the layouts follow the nodes the other passes leave.
  if (options.blocked_layout) logs.push_back(blocked_layout(graph, active_isa()));
  graph.check_types();
  return logs;
}

}  // namespace minfer
