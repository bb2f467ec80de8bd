// The layouts of a kernel's input and output tensors: NCHW, or the blocked NCHWc
// ([N, C / c, H, W, c], c the kernel's lanes; ops/blocked_layout.h), which needs the
// tensor's channels to be a multiple of c. Shared by the kernels that read or write
// NCHWc: the blocked convolution and the channels-in-lanes depthwise one.
#pragma once

namespace minfer::kernels {

struct BlockedLayouts {
  bool input_blocked = false, output_blocked = false;
  bool any() const { return input_blocked || output_blocked; }
};

}  // namespace minfer::kernels
