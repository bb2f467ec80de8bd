// BN folding (seed 003): a BatchNormalization after a Conv, ConvTranspose or Gemm is
// folded into that op's weights and bias and disappears:
//   w' = w * gamma / sqrt(var + eps),  b' = (b - mean) * gamma / sqrt(var + eps) + beta.
#pragma once

#include "graph/graph.h"
#include "graph/passes/pass_log.h"

namespace minfer {

// Folds where legal: the producer's output feeds the BN alone, and the weights, bias and
// BN statistics are constants. The merged node is named "<producer>+<bn>"; a second BN
// folded into it (BN after BN) extends the same "folded" action, so every action names
// nodes of the graph before the pass and a result in the graph after it. A BN that
// cannot be folded stays and is logged as "kept" with the reason.
PassLog fold_batch_norm(Graph& graph);

}  // namespace minfer
