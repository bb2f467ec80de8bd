#include "ops/blocked_layout.h"

#include <fmt/format.h>

#include "graph/errors.h"
#include "ops/kernels/blocked_conv.h"

namespace minfer {

Shape blocked_shape(const Shape& nchw, int64_t lanes) {
  if (nchw.size() != 4 || lanes <= 0 || nchw[1] % lanes != 0)
    throw OpError(fmt::format("a tensor of shape {} has no {} layout", shape_str(nchw), layout_name(lanes)));
  return {nchw[0], nchw[1] / lanes, nchw[2], nchw[3], lanes};
}

Shape unblocked_shape(const Shape& nchwc, int64_t lanes) {
  if (nchwc.size() != 5 || nchwc[4] != lanes)
    throw OpError(fmt::format("input {} is not laid out {}", shape_str(nchwc), layout_name(lanes)));
  return {nchwc[0], nchwc[1] * lanes, nchwc[2], nchwc[3]};
}

int64_t blocked_lanes(Isa isa) {
  const kernels::BlockedConvKernel* k = kernels::blocked_conv_kernel(isa);
  return k ? k->lanes : 0;
}

std::string layout_name(int64_t lanes) {
  return lanes > 0 ? fmt::format("NCHW{}c", lanes) : "NCHW";
}

}  // namespace minfer
