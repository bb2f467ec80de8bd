// Channel-scale fusion: a Mul of a [N, C, H, W] float tensor by a per-image, per-channel
// factor [N, C, 1, 1] (a squeeze-and-excitation block's gate: EfficientNet's, MobileNetV3's)
// whose product only a 1x1 Conv reads becomes that Conv with the factor as a fifth input
// (attribute fused_input_scale). The pointwise GEMM multiplies each input row by its factor
// as it packs it, so the scaled tensor is never written (other kernels scale a copy of the
// input first). MACs and FLOPs are unchanged (the Conv counts the Mul's multiplies); the
// Mul's write of the product and the Conv's reading it back are saved. Outputs are
// bit-identical: each product x * s is rounded once, as the Mul rounds it.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

PassLog fuse_channel_scale(CompileGraph& graph);

}  // namespace minfer
