// Residual fusion: an Add of two same-shaped float tensors, one of them a Conv's output
// that nothing else reads (a ResNet or MobileNetV2 block's shortcut sum), becomes that
// Conv with the other operand as a fourth input; the Conv sums it where it stores its
// output (the GEMM's and the blocked kernel's epilogues; other kernels in one more pass)
// and runs the Add's fused activation after the sum. MACs and FLOPs are unchanged; the
// Conv output's write and the Add's reading it back are saved.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

// Runs after fuse_activations, so a residual Add + Relu becomes one Conv + Add + Relu. The
// Conv must run no activation of its own (the sum comes before it) and must come after
// the producer of the Add's other operand (the fused node keeps the Conv's place); when
// both operands qualify, the later Conv takes the sum.
PassLog fuse_residual_add(CompileGraph& graph);

}  // namespace minfer
