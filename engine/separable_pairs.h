// Finds the depthwise-separable pairs of a compiled plan (a depthwise Conv whose output
// reaches a pointwise Conv only through BatchNormalization and activation nodes), so
// the report can set each pair beside the regular convolution it replaces.
#pragma once

#include <vector>

#include "engine/compiled_model.h"
#include "profiler/report.h"

namespace minfer {

// In execution order of the depthwise step. Every tensor between the two Convs must
// have exactly one reader and not be a graph output: otherwise the depthwise result is
// used elsewhere and the pair is not a drop-in replacement for one convolution.
std::vector<SeparablePairRecord> find_separable_pairs(const CompiledModel& model);

}  // namespace minfer
