// Pad fusion: a constant Pad of zeros on the spatial axes alone (none on N and C, none
// negative) whose only reader is a Conv or an AveragePool, reading it as its data input,
// becomes that node's own padding: the Pad's pads are added to the node's `pads`, and an
// AveragePool then counts them in its divisors (count_include_pad = 1), as it counted the
// Pad's zeros. Not into an AveragePool that pads itself without counting that padding
// (which would then count), nor into a node with auto_pad, nor into a MaxPool (it pads
// with -inf, not 0). The padded copy is never written: Inception V3's average pools
// (exported as Pad + AveragePool) and the explicit Pads TensorFlow's "SAME" convolutions
// export as. MACs and FLOPs are unchanged; outputs are the same bits.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

PassLog fuse_pads(CompileGraph& graph);

}  // namespace minfer
