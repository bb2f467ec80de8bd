// Removes ops that compute their input unchanged (Op::is_identity: Identity, Dropout at
// inference, Pad with all pads zero): their readers read the input instead. A Dropout
// whose mask is read stays.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

// An identity whose output is a graph output stays only when its input cannot be
// renamed to it (a graph input, a constant, or another graph output).
PassLog eliminate_identities(CompileGraph& graph);

}  // namespace minfer
