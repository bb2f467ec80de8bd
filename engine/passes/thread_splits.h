// How a layer's threads split its output, where its reader's split makes one way local: a
// 1x1 convolution (one group) whose output only a depthwise convolution reads gets the
// attribute split_output_channels, since the depthwise kernels give each thread whole
// channels (planes or groups of them). Its kernel may then give each thread output
// channels rather than pixels, so that the planes a thread's depthwise reads are the ones
// its own core just wrote (ops/kernels/pointwise_conv.h says where it does). Costs and
// values are unchanged: each output is summed in the same order whichever thread runs it.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

// The Conv attribute the pass sets.
inline constexpr const char* kSplitOutputChannelsAttr = "split_output_channels";

PassLog thread_splits(CompileGraph& graph);

}  // namespace minfer
