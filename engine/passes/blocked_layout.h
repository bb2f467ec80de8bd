// blocked_layout: consecutive convolutions run in the blocked layout NCHWc
// (ops/blocked_layout.h) with their tensors kept in it between them, instead of each
// reordering its input and output; Reorder nodes change a tensor's layout where a region
// of such ops begins (only where a residual must be NCHWc: a convolution reads an NCHW
// input itself) and where it ends, so the report shows what the layout costs. The ops
// in a region are those whose Op::blocked_layout says NCHWc is faster for them on the
// target; an op's output is NCHWc when an op of the region reads it. Costs are unchanged
// but for the Reorders' bytes.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"
#include "profiler/isa.h"

namespace minfer {

PassLog blocked_layout(CompileGraph& graph, Isa isa);

}  // namespace minfer
