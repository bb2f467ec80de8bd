// Direct depthwise convolution of one image: each input channel is filtered on its own
// by `multiplier` kernels (ONNX Conv with group == input channels), with no im2col.
#pragma once

#include "ops/reference/conv2d.h"

namespace minfer::reference {

// s.group == s.cin; output channel c * m + j (m = s.cout / s.cin) reads input channel c
// with kernel weights[c * m + j]. Any kernel size, stride, dilation and padding.
void depthwise_conv2d(const ConvGeometry& s, const float* x, const float* weights, const float* bias, float* y);

}  // namespace minfer::reference
