// Activation fusion: a Relu, Clip, LeakyRelu, Sigmoid, HardSwish (or other element-wise
// activation) that alone reads a Conv, ConvTranspose or Gemm output runs in that op's
// epilogue, while the output is still in cache, instead of as a pass over memory.
#pragma once

#include "graph/graph.h"
#include "graph/passes/pass_log.h"

namespace minfer {

// The producer gets the engine attributes "activation" (the op type) and
// "activation.<attribute>" (Clip's bounds from its attributes or constant inputs) and is
// renamed "<producer>+<activation>"; the activation node goes.
PassLog fuse_activations(Graph& graph);

}  // namespace minfer
