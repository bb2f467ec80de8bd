// Exact GELU as PyTorch exports it below opset 20, x * (1 + Erf(x / sqrt 2)) * 0.5 in
// five nodes, becomes one Gelu activation, which reads x once and can then fuse into the
// epilogue of x's producer (fuse_activations runs after). FLOPs stay 5 per element.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

// Rewrites where each intermediate feeds the pattern alone and the constants are sqrt 2
// (or its reciprocal as a Mul), 1 and 0.5 to float precision. The last Mul becomes the
// Gelu, named "<div>+<last mul>"; the other four disappear.
PassLog fuse_gelu(CompileGraph& graph);

}  // namespace minfer
