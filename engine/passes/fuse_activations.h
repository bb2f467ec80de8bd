// Activation fusion: an activation whose input an op with an epilogue produces (Conv,
// ConvTranspose, Gemm, MatMul, the element-wise binaries such as a residual Add:
// OpTraits::fuses_activation) runs in that epilogue, while the output is still in cache;
// the activation node disappears. FLOPs are unchanged; the
// intermediate tensor's write and read are saved.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

// Fuses where the producer's output feeds the activation alone and the activation's
// parameters are constants; the merged node is named "<producer>+<activation>".
PassLog fuse_activations(CompileGraph& graph);

}  // namespace minfer
