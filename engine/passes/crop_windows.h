// Window cropping: a Conv whose window has rows or columns of taps that read only
// padding, at every output position, loses them. The weights become a constant of the
// cropped window, the pads shrink by what the dropped taps spanned, and the output is
// unchanged: those taps only ever multiplied padding zeros. DeepLabV3's atrous pyramid
// runs 3x3 windows at dilations 12, 24 and 36 over a 14x14 (or 28x28) map: at 24 and 36
// the outer taps land in the padding for every output pixel, and the layers become 1x1
// convolutions (9x fewer MACs, which the report then counts). Conv nodes with 1-D or 2-D
// windows and constant weights; a side is cropped only as far as its pad stays >= 0 and
// the output size unchanged.
#pragma once

#include "engine/compile_graph.h"
#include "engine/passes/pass_log.h"

namespace minfer {

PassLog crop_windows(CompileGraph& graph);

}  // namespace minfer
