// MatMul bias fusion: an Add of a MatMul's product (which nothing else reads) and a
// constant of the product's N columns (a linear layer's bias: ConvNeXt's and a
// transformer's MLPs, exported as MatMul + Add) becomes the MatMul with the constant as a
// third input (attribute fused_bias); the GEMM adds it per column in its epilogue, where
// fuse_activations can then put the activation that follows (ConvNeXt's Gelu). MACs and
// FLOPs are unchanged (the MatMul counts the Add's); the product's write and the Add's
// reading it back are saved. Outputs are the same bits: each sum is rounded once, as the
// Add rounds it.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

// Runs before fuse_activations, so MatMul + Add + activation becomes one node.
PassLog fuse_matmul_bias(CompileGraph& graph);

}  // namespace minfer
