// The portable direct convolution: the same template over one float, 4 output channels x
// 4 columns.
#include "ops/kernels/direct_conv_impl.h"

namespace minfer::kernels {

constinit const DirectConvKernel direct_conv_f32_4x4_scalar = {"direct_conv_f32_4x4_scalar", Isa::kScalar, 1,
                                                               &direct_conv_rows<ScalarVec, 4, 4>};

}  // namespace minfer::kernels
