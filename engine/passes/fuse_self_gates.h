// Self-gated activations: x * Sigmoid(x) becomes one Swish (SiLU) and x * HardSigmoid(x)
// with alpha 1/6 and beta 1/2 one HardSwish, so the activation reads x once, writes once,
// and can then fuse into the epilogue of x's producer (fuse_activations runs after).
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

// Rewrites where the gate's output feeds the Mul alone; the gate node becomes the
// activation, named "<gate>+<mul>", and the Mul disappears.
PassLog fuse_self_gates(CompileGraph& graph);

}  // namespace minfer
