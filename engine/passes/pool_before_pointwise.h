// Pool before pointwise: a 1x1 Conv (stride 1, no padding, nothing fused into it) whose
// output only an AveragePool reads, unpadded and in floor mode, with fewer output pixels
// than input pixels, swaps places with the pool: the pool averages the Conv's input and
// the Conv runs on the pooled pixels. Each pooled value is a mean (weights summing to 1)
// and a 1x1 Conv is affine per pixel, so the two orders compute the same values (rounded
// in another order). The Conv's MACs shrink by the pool's reduction: DenseNet's
// transitions (BatchNorm, Relu, 1x1 Conv, 2x2 average pool) run their Conv on a quarter
// of the pixels; the pool then reads the Conv's input channels instead of its outputs.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

PassLog pool_before_pointwise(CompileGraph& graph);

}  // namespace minfer
