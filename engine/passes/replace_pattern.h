// The rewrite the pattern-fusing passes share (fuse_layer_norm, fuse_gelu): a matched
// chain of nodes becomes one node of another op type.
#pragma once

#include <string>
#include <vector>

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

// `nodes` (in graph order) become one node of `op_type` with `attrs` and `inputs`: the
// last takes the pattern's place (its inputs exist before the first and it comes
// before every reader of its output), named "<first>+<last>"; the others are marked in
// `removed`. Returns the "fused" action, its op type "<op_type> part".
PassAction replace_pattern(CompileGraph& graph, const std::vector<size_t>& nodes, const std::string& op_type,
                           Attributes attrs, std::vector<std::string> inputs, std::vector<bool>& removed);

}  // namespace minfer
