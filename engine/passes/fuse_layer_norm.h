// Layer normalisation as PyTorch exports it below opset 17,
//   m = ReduceMean(x), d = x - m, v = ReduceMean(d ^ 2), y = d / Sqrt(v + eps) * gamma + beta,
// nine nodes over the trailing axes, becomes one LayerNormalization: x is read once
// instead of three times and the five row-sized and four x-sized intermediates vanish.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

// Rewrites where every intermediate feeds the pattern alone, both means reduce the same
// trailing axes with keepdims, the exponent is 2 and epsilon, gamma (and beta, when the
// pattern ends with its Add) are constants of the normalised shape. The last node
// becomes the LayerNormalization, named "<first>+<last>"; the others disappear.
PassLog fuse_layer_norm(CompileGraph& graph);

}  // namespace minfer
