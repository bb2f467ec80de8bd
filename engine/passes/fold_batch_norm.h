// BN folding: a per-channel affine (BatchNormalization at inference) after an op with
// weights is folded into those weights and bias and disappears:
//   w' = w * gamma / sqrt(var + eps),  b' = (b - mean) * gamma / sqrt(var + eps) + beta.
// The ops say what folds where (OpTraits::channel_affine, Op::fold_channel_affine).
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

// Folds where legal: the producer's output feeds the affine alone, and the producer's
// weights and bias and the affine's parameters are constants. The merged node is named
// "<producer>+<bn>". An affine that cannot be folded stays, logged as "kept" with the reason.
PassLog fold_batch_norm(CompileGraph& graph);

}  // namespace minfer
