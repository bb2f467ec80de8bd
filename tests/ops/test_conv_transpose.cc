// ConvTranspose: both methods against each other and against a direct scatter written
// here, over strides, pads, output_padding, dilations, groups, output_shape, auto_pad and
// 1-D; ONNX's own test cases; costs and workspace by hand; the method switch and errors.
#include <gtest/gtest.h>

#include <algorithm>

#include "ops/kernels/conv_gemm.h"
#include "ops/kernels/gemm.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

struct DeconvCase {
  const char* label;
  Shape x;  // [N, C, L] or [N, C, H, W]
  int64_t cout, group;
  std::vector<int64_t> kernel, strides, dilations, pads, output_padding, output_shape;
  std::string auto_pad;
  bool bias;
  // Worked out by hand from ONNX's rules: the begin pads and the output's spatial shape.
  std::vector<int64_t> pad_begin, out;
};

void PrintTo(const DeconvCase& c, std::ostream* os) {
  *os << c.label;
}

// Axis values as 2-D (a 1-D case is 2-D of height 1).
int64_t at(const std::vector<int64_t>& v, size_t axis, size_t rank, int64_t fallback) {
  if (v.empty()) return fallback;
  if (rank == 1) return axis == 0 ? fallback : v[0];
  return v[axis];
}

// The definition: input pixel (iy, ix) of channel ic adds x * w[ic, oc, ky, kx] to output
// (iy * sh - pad_top + ky * dh, ix * sw - pad_left + kx * dw) of each of its group's
// output channels; positions outside the output are dropped.
std::vector<float> naive_deconv(const DeconvCase& c, const std::vector<float>& x, const std::vector<float>& wt,
                                const std::vector<float>& b) {
  const size_t rank = c.x.size() - 2;
  const int64_t n = c.x[0], cin = c.x[1], h = rank == 2 ? c.x[2] : 1, w = c.x.back();
  const int64_t kh = at(c.kernel, 0, rank, 1), kw = at(c.kernel, 1, rank, 1);
  const int64_t sh = at(c.strides, 0, rank, 1), sw = at(c.strides, 1, rank, 1);
  const int64_t dh = at(c.dilations, 0, rank, 1), dw = at(c.dilations, 1, rank, 1);
  const int64_t pt = at(c.pad_begin, 0, rank, 0), pl = at(c.pad_begin, 1, rank, 0);
  const int64_t oh = at(c.out, 0, rank, 1), ow = at(c.out, 1, rank, 1);
  const int64_t cig = cin / c.group, cog = c.cout / c.group;
  std::vector<double> y(n * c.cout * oh * ow, 0.0);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t oc = 0; oc < c.cout; ++oc)
      for (int64_t i = 0; i < oh * ow; ++i) y[(in * c.cout + oc) * oh * ow + i] = c.bias ? b[oc] : 0.0;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < cin; ++ic)
      for (int64_t iy = 0; iy < h; ++iy)
        for (int64_t ix = 0; ix < w; ++ix)
          for (int64_t o = 0; o < cog; ++o)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t oy = iy * sh - pt + ky * dh, ox = ix * sw - pl + kx * dw;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                const int64_t oc = (ic / cig) * cog + o;
                y[((in * c.cout + oc) * oh + oy) * ow + ox] +=
                    double(x[((in * cin + ic) * h + iy) * w + ix]) * wt[((ic * cog + o) * kh + ky) * kw + kx];
              }
  return std::vector<float>(y.begin(), y.end());
}

Attributes attrs_of(const DeconvCase& c, const std::string& method) {
  Attributes a;
  a.set("method", method);
  a.set("group", c.group);
  if (!c.strides.empty()) a.set("strides", c.strides);
  if (!c.dilations.empty()) a.set("dilations", c.dilations);
  if (!c.pads.empty()) a.set("pads", c.pads);
  if (!c.output_padding.empty()) a.set("output_padding", c.output_padding);
  if (!c.output_shape.empty()) a.set("output_shape", c.output_shape);
  if (!c.auto_pad.empty()) a.set("auto_pad", c.auto_pad);
  return a;
}

class DeconvTest : public ::testing::TestWithParam<DeconvCase> {};

TEST_P(DeconvTest, BothMethodsMatchTheDirectScatter) {
  const DeconvCase c = GetParam();
  Shape wshape = {c.x[1], c.cout / c.group};
  wshape.insert(wshape.end(), c.kernel.begin(), c.kernel.end());
  const auto x = random_values(num_elements(c.x), 11);
  const auto wt = random_values(num_elements(wshape), 12);
  const auto b = random_values(c.cout, 13);
  std::vector<TestTensor> in = {input(c.x, x), weight(wshape, wt)};
  if (c.bias) in.push_back(weight({c.cout}, b));
  Shape expected_shape = {c.x[0], c.cout};
  expected_shape.insert(expected_shape.end(), c.out.begin(), c.out.end());
  const std::vector<float> expected = naive_deconv(c, x, wt, b);

  std::vector<std::vector<float>> results;
  for (const std::string method : {"col2im", "conv"}) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(method + " threads " + std::to_string(threads));
      OpResult r = run_op("ConvTranspose", in, attrs_of(c, method), 1, threads);
      ASSERT_EQ(r.shapes[0], expected_shape);
      EXPECT_LT(max_rel_error(r.outputs[0], expected), 1e-5);
      EXPECT_EQ(r.kind, method);
      results.push_back(r.outputs[0]);
    }
  }
  EXPECT_LT(max_rel_error(results.front(), results.back()), 1e-5) << "col2im and conv disagree";
}

// One case per line reads as a table.
// clang-format off
INSTANTIATE_TEST_SUITE_P(
    Shapes, DeconvTest,
    ::testing::Values(
        // reach = s * (in - 1) + output_padding + (k - 1) * d + 1; out = reach - pads.
        DeconvCase{"unit_stride", {1, 3, 5, 5}, 4, 1, {3, 3}, {}, {}, {}, {}, {}, "", true, {0, 0}, {7, 7}},
        DeconvCase{"stride2_pad1_k4", {2, 4, 6, 5}, 3, 1, {4, 4}, {2, 2}, {}, {1, 1, 1, 1}, {}, {}, "", true,
                   {1, 1}, {12, 10}},
        DeconvCase{"stride3x2_asym_pads", {1, 2, 4, 5}, 3, 1, {3, 2}, {3, 2}, {}, {0, 1, 2, 0}, {}, {}, "", false,
                   {0, 1}, {10, 9}},
        DeconvCase{"output_padding", {1, 3, 4, 4}, 2, 1, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}, {1, 1}, {}, "", true,
                   {1, 1}, {8, 8}},
        DeconvCase{"dilation2", {1, 2, 5, 4}, 3, 1, {3, 3}, {1, 1}, {2, 2}, {1, 0, 1, 0}, {}, {}, "", true,
                   {1, 0}, {7, 8}},
        DeconvCase{"dilation_stride_output_padding", {1, 2, 3, 4}, 2, 1, {2, 3}, {2, 3}, {3, 2}, {}, {2, 1}, {}, "",
                   true, {0, 0}, {10, 15}},
        DeconvCase{"groups2", {1, 4, 5, 5}, 6, 2, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}, {}, {}, "", true,
                   {1, 1}, {9, 9}},
        DeconvCase{"depthwise_groups", {2, 3, 4, 3}, 3, 3, {3, 3}, {2, 1}, {}, {}, {}, {}, "", true,
                   {0, 0}, {9, 5}},
        DeconvCase{"pads_beyond_kernel", {1, 2, 6, 6}, 2, 1, {3, 3}, {3, 3}, {}, {3, 4, 3, 2}, {}, {}, "", true,
                   {3, 4}, {12, 12}},
        DeconvCase{"kernel_1x1_stride2", {1, 3, 4, 5}, 2, 1, {1, 1}, {2, 2}, {}, {}, {1, 1}, {}, "", true,
                   {0, 0}, {8, 10}},
        DeconvCase{"channels_past_the_tiles", {2, 19, 5, 6}, 35, 1, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}, {1, 0}, {}, "",
                   true, {1, 1}, {10, 11}},
        DeconvCase{"groups3_odd_channels", {1, 9, 4, 7}, 15, 3, {2, 3}, {3, 1}, {}, {0, 1, 0, 1}, {}, {}, "", true,
                   {0, 1}, {11, 7}},
        DeconvCase{"odd_sizes_k5", {1, 3, 7, 3}, 5, 1, {5, 5}, {2, 3}, {}, {2, 2, 2, 2}, {}, {}, "", true,
                   {2, 2}, {13, 7}},
        // output_shape (pads ignored): total = reach - target; odd extra at the beginning,
        // a negative total grows the output at the end.
        DeconvCase{"output_shape_crop", {1, 2, 5, 5}, 3, 1, {3, 3}, {2, 2}, {}, {4, 4, 4, 4}, {}, {10, 9}, "", true,
                   {1, 1}, {10, 9}},
        DeconvCase{"output_shape_grow", {1, 2, 3, 3}, 2, 1, {3, 3}, {3, 2}, {}, {}, {}, {11, 9}, "", true,
                   {0, 0}, {11, 9}},
        // SAME: out = in * stride; odd extra at the end (UPPER) or the beginning (LOWER).
        DeconvCase{"same_upper", {1, 2, 4, 3}, 3, 1, {3, 3}, {2, 2}, {}, {}, {}, {}, "SAME_UPPER", true,
                   {0, 0}, {8, 6}},
        DeconvCase{"same_lower", {1, 2, 4, 3}, 3, 1, {3, 3}, {2, 2}, {}, {}, {}, {}, "SAME_LOWER", true,
                   {1, 1}, {8, 6}},
        DeconvCase{"same_upper_k4", {1, 2, 4, 4}, 2, 1, {4, 4}, {2, 2}, {}, {}, {}, {}, "SAME_UPPER", false,
                   {1, 1}, {8, 8}},
        DeconvCase{"valid_ignores_pads", {1, 2, 3, 3}, 2, 1, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}, {}, {}, "VALID", true,
                   {0, 0}, {7, 7}},
        // 1-D [N, C, L].
        DeconvCase{"1d_stride2", {2, 3, 7}, 4, 1, {4}, {2}, {}, {1, 2}, {1}, {}, "", true, {1}, {14}},
        DeconvCase{"1d_groups_dilation", {1, 4, 6}, 2, 2, {3}, {3}, {2}, {0, 0}, {2}, {}, "", true, {0}, {22}},
        DeconvCase{"1d_output_shape", {1, 2, 5}, 2, 1, {3}, {2}, {}, {}, {}, {9}, "", true, {1}, {9}}));
// clang-format on

// ONNX's backend test cases (onnx/backend/test/case/node/convtranspose.py): x = 0..8 as
// 3x3, weights all ones [1, 2, 3, 3]; both output channels are equal.
std::vector<float> onnx_case(Attributes a, const std::string& method, Shape& shape) {
  std::vector<float> x(9);
  for (int i = 0; i < 9; ++i) x[i] = float(i);
  a.set("method", method);
  OpResult r = run_op("ConvTranspose", {input({1, 1, 3, 3}, x), weight({1, 2, 3, 3}, std::vector<float>(18, 1.0f))}, a);
  shape = r.shapes[0];
  const size_t half = r.outputs[0].size() / 2;
  EXPECT_TRUE(std::equal(r.outputs[0].begin(), r.outputs[0].begin() + half, r.outputs[0].begin() + half));
  return std::vector<float>(r.outputs[0].begin(), r.outputs[0].begin() + half);
}

TEST(ConvTranspose, MatchesOnnxBackendTestCases) {
  for (const std::string method : {"col2im", "conv"}) {
    SCOPED_TRACE(method);
    Shape shape;
    EXPECT_EQ(onnx_case({}, method, shape), (std::vector<float>{0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                                                                27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8}));
    Attributes same;  // test_convtranspose_autopad_same
    same.set("auto_pad", std::string("SAME_UPPER"));
    same.set("strides", std::vector<int64_t>{2, 2});
    EXPECT_EQ(onnx_case(same, method, shape),
              (std::vector<float>{0, 0, 1, 1, 3, 2, 0, 0, 1,  1,  3,  2,  3, 3, 8,  5, 12, 7,
                                  3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8}));
    EXPECT_EQ(shape, (Shape{1, 2, 6, 6}));
    Attributes out_shape;  // test_convtranspose_output_shape: the output grows at the end
    out_shape.set("strides", std::vector<int64_t>{3, 2});
    out_shape.set("output_shape", std::vector<int64_t>{10, 8});
    const std::vector<float> row0 = {0, 0, 1, 1, 3, 2, 2, 0}, row1 = {3, 3, 7, 4, 9, 5, 5, 0},
                             row2 = {6, 6, 13, 7, 15, 8, 8, 0}, zero(8, 0.0f);
    std::vector<float> grown;
    for (const auto* row : {&row0, &row0, &row0, &row1, &row1, &row1, &row2, &row2, &row2, &zero})
      grown.insert(grown.end(), row->begin(), row->end());
    EXPECT_EQ(onnx_case(out_shape, method, shape), grown);
    EXPECT_EQ(shape, (Shape{1, 2, 10, 8}));
    Attributes padding;  // test_convtranspose_pad: output_padding gives the same
    padding.set("strides", std::vector<int64_t>{3, 2});
    padding.set("output_padding", std::vector<int64_t>{1, 1});
    EXPECT_EQ(onnx_case(padding, method, shape), grown);
    Attributes pads;  // test_convtranspose_pads
    pads.set("strides", std::vector<int64_t>{3, 2});
    pads.set("pads", std::vector<int64_t>{1, 2, 1, 2});
    EXPECT_EQ(onnx_case(pads, method, shape),
              (std::vector<float>{1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15}));
  }
}

TEST(ConvTranspose, MatchesOnnxDilationCase) {
  // test_convtranspose_dilations.
  const std::vector<float> x = {3, 8, 1, 9, 5, 7, 3, 2, 6}, w = {7, 2, 1, 9};
  Attributes a;
  a.set("dilations", std::vector<int64_t>{2, 2});
  for (const std::string method : {"col2im", "conv"}) {
    a.set("method", method);
    OpResult r = run_op("ConvTranspose", {input({1, 1, 3, 3}, x), weight({1, 1, 2, 2}, w)}, a);
    EXPECT_EQ(r.outputs[0], (std::vector<float>{21, 56, 13, 16, 2,  63, 35, 67, 10, 14, 24, 22, 76,
                                                76, 21, 9,  5,  88, 45, 63, 3,  2,  33, 18, 54}))
        << method;
  }
}

// A DCGAN-style upsampling: [1, 64, 8, 8] -> [1, 32, 16, 16], kernel 4, stride 2, pad 1.
std::vector<TestTensor> upsampling(int64_t group) {
  return {input({1, 64, 8, 8}, {}), weight({64, 32 / group, 4, 4}, std::vector<float>(64 * 32 / group * 16)),
          weight({32}, std::vector<float>(32))};
}

Attributes upsampling_attrs(const std::string& method, int64_t group) {
  Attributes a;
  a.set("strides", std::vector<int64_t>{2, 2});
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  a.set("group", group);
  a.set("method", method);
  return a;
}

TEST(ConvTransposeCost, BothMethodsByHand) {
  // col2im: Kh*Kw*Cin*(Cout/group)*Hin*Win; conv: Kh*Kw*(Cin/group)*Cout*Hout*Wout.
  OpResult col = cost_of("ConvTranspose", upsampling(1), upsampling_attrs("col2im", 1));
  EXPECT_EQ(col.shapes[0], (Shape{1, 32, 16, 16}));
  EXPECT_EQ(col.cost.macs, 4 * 4 * 64 * 32 * 8 * 8);  // 2,097,152
  EXPECT_EQ(col.cost.macs, 2'097'152);
  EXPECT_EQ(col.cost.flops, 4'194'304);
  EXPECT_EQ(col.cost.params, 64 * 32 * 16 + 32);
  EXPECT_EQ(col.cost.bytes_read, 4 * (64 * 8 * 8 + 64 * 32 * 16 + 32));
  EXPECT_EQ(col.cost.bytes_written, 4 * 32 * 16 * 16);
  EXPECT_EQ(col.kind, "col2im");
  OpResult conv = cost_of("ConvTranspose", upsampling(1), upsampling_attrs("conv", 1));
  EXPECT_EQ(conv.cost.macs, 8'388'608);  // 4*4*64*32*16*16: four times col2im's at stride 2x2
  EXPECT_EQ(conv.cost.flops, 16'777'216);
  EXPECT_EQ(conv.cost.params, col.cost.params);
  EXPECT_EQ(conv.kind, "conv");

  OpResult col_g = cost_of("ConvTranspose", upsampling(2), upsampling_attrs("col2im", 2));
  EXPECT_EQ(col_g.cost.macs, 1'048'576);  // 4*4*64*16*8*8
  OpResult conv_g = cost_of("ConvTranspose", upsampling(2), upsampling_attrs("conv", 2));
  EXPECT_EQ(conv_g.cost.macs, 4'194'304);  // 4*4*32*32*16*16
}

TEST(ConvTransposeCost, BatchAnd1d) {
  // [2, 6, 10] -> kernel 3, stride 2, group 3, Cout 9: output length 2*9+3 = 21.
  std::vector<TestTensor> in = {input({2, 6, 10}, {}), weight({6, 3, 3}, std::vector<float>(54))};
  Attributes a;
  a.set("strides", std::vector<int64_t>{2});
  a.set("group", int64_t{3});
  OpResult col = cost_of("ConvTranspose", in, a);  // the default method
  EXPECT_EQ(col.shapes[0], (Shape{2, 9, 21}));
  EXPECT_EQ(col.kind, "col2im");
  EXPECT_EQ(col.cost.macs, 2 * 3 * 6 * 3 * 10);  // 1,080
  a.set("method", std::string("conv"));
  EXPECT_EQ(cost_of("ConvTranspose", in, a).cost.macs, 2 * 3 * 2 * 9 * 21);  // 2,268
}

TEST(ConvTranspose, WorkspaceAndDetailsFollowTheMethod) {
  auto step = [](const std::string& method) {
    auto model = compile(single_op_graph("ConvTranspose", upsampling(1), upsampling_attrs(method, 1)));
    return std::make_pair(model->steps()[0].facts().workspace_bytes, model->steps()[0].facts().details);
  };
  const auto [col_ws, col_details] = step("col2im");
  // One group's columns Cout*Kh*Kw x Hin*Win, then the GEMM's scratch (weights prepacked).
  const kernels::GemmKernel& kernel = kernels::active_gemm_kernel();
  EXPECT_EQ(col_ws, 4 * 32 * 16 * 8 * 8 +
                        kernels::gemm_workspace_bytes(kernel, 32 * 16, 8 * 8, 64, 1, kernels::GemmPacked::kA));
  EXPECT_EQ(col_details["method"], "col2im");
  EXPECT_EQ(col_details["prepacked"], "weights");
  EXPECT_EQ(col_details["macs_by_method"]["col2im"], 2'097'152);
  EXPECT_EQ(col_details["macs_by_method"]["conv"], 8'388'608);
  // conv: the zero-inserted input 64x15x15, then the convolution's GEMM scratch (its
  // weights flipped and packed once, its im2col packed straight into the GEMM's panels):
  // less than the 64*16 x 16*16 column matrix it replaces.
  const auto [conv_ws, conv_details] = step("conv");
  const int64_t conv_gemm = kernels::gemm_workspace_bytes(kernel, 32, 16 * 16, 64 * 16, 1, kernels::GemmPacked::kA);
  EXPECT_EQ(conv_ws, 4 * 14400 + conv_gemm);
  EXPECT_LT(conv_gemm, 4 * 262144);
  EXPECT_EQ(conv_details["method"], "conv");
}

TEST(ConvTranspose, RuntimeWeightsAndFusedActivation) {
  const auto x = random_values(1 * 6 * 5 * 4, 41);
  const auto wt = random_values(6 * 2 * 3 * 3, 42);
  const auto b = random_values(4, 43);
  for (const std::string method : {"col2im", "conv"}) {
    SCOPED_TRACE(method);
    Attributes a;
    a.set("strides", std::vector<int64_t>{2, 2});
    a.set("pads", std::vector<int64_t>{1, 0, 1, 0});
    a.set("group", int64_t{2});
    a.set("method", method);
    const OpResult plain =
        run_op("ConvTranspose", {input({1, 6, 5, 4}, x), weight({6, 2, 3, 3}, wt), weight({4}, b)}, a);
    const OpResult runtime =
        run_op("ConvTranspose", {input({1, 6, 5, 4}, x), input({6, 2, 3, 3}, wt), weight({4}, b)}, a);
    EXPECT_EQ(runtime.details["prepacked"], "none");
    EXPECT_EQ(runtime.outputs[0], plain.outputs[0]);
    a.set("activation", std::string("LeakyRelu"));
    a.set("activation.alpha", 0.1);
    for (int threads : {1, 2}) {
      const OpResult fused =
          run_op("ConvTranspose", {input({1, 6, 5, 4}, x), weight({6, 2, 3, 3}, wt), weight({4}, b)}, a, 1, threads);
      std::vector<float> expected = plain.outputs[0];
      for (float& v : expected) v = v < 0 ? 0.1f * v : v;
      EXPECT_LT(max_rel_error(fused.outputs[0], expected), 1e-6);
      EXPECT_EQ(fused.details["fused_activation"], "LeakyRelu");
      EXPECT_EQ(fused.cost.flops, plain.cost.flops + 2 * num_elements(fused.shapes[0]));  // LeakyRelu: 2 per element
    }
  }
}

TEST(ConvTranspose, RunWideMethodOverridesTheNodeAttribute) {
  CompileOptions options;
  options.attribute_overrides.push_back({"ConvTranspose", "method", std::string("conv")});
  auto model = compile(single_op_graph("ConvTranspose", upsampling(1), upsampling_attrs("col2im", 1)), options);
  EXPECT_EQ(model->steps()[0].kind(), "conv");
  EXPECT_EQ(model->steps()[0].cost.macs, 8'388'608);
}

TEST(ConvTranspose, RejectsBadAttributesAndShapes) {
  auto compile_deconv = [](Shape x, Shape w, Attributes a) {
    compile(single_op_graph("ConvTranspose", {input(x, {}), weight(w, std::vector<float>(num_elements(w)))}, a));
  };
  auto message = [&](Shape x, Shape w, Attributes a) -> std::string {
    try {
      compile_deconv(x, w, a);
    } catch (const ModelError& e) {
      return e.what();
    }
    return "accepted";
  };
  const std::string prefix = "<test>: node 'node' (ConvTranspose): ";
  Attributes group2;
  group2.set("group", int64_t{2});
  EXPECT_EQ(message({1, 3, 4, 4}, {3, 2, 3, 3}, group2), prefix + "group 2 does not divide the 3 input channels");
  EXPECT_EQ(message({1, 3, 4, 4}, {4, 2, 3, 3}, {}),
            prefix + "weights 4x2x3x3 expect 4 input channels, the input has 3");
  Attributes big_adj;
  big_adj.set("strides", std::vector<int64_t>{2, 2});
  big_adj.set("output_padding", std::vector<int64_t>{2, 0});
  EXPECT_EQ(message({1, 3, 4, 4}, {3, 2, 3, 3}, big_adj),
            prefix +
                "attribute 'output_padding' value 2 must be non-negative and smaller than the stride 2 or the "
                "dilation 1");
  Attributes full_shape;
  full_shape.set("output_shape", std::vector<int64_t>{1, 2, 6, 6});
  EXPECT_EQ(message({1, 3, 4, 4}, {3, 2, 3, 3}, full_shape),
            prefix + "attribute 'output_shape' must have 2 values (the spatial sizes), got 4");
  Attributes zero_shape;
  zero_shape.set("output_shape", std::vector<int64_t>{0, 6});
  EXPECT_EQ(message({1, 3, 4, 4}, {3, 2, 3, 3}, zero_shape),
            prefix + "attribute 'output_shape' must be positive, got 0");
  Attributes huge_pads;
  huge_pads.set("pads", std::vector<int64_t>{3, 0, 3, 0});
  EXPECT_EQ(message({1, 3, 2, 2}, {3, 2, 1, 1}, huge_pads),
            prefix + "pads 3 and 3 leave no output (the input reaches 2 positions)");
  Attributes method;
  method.set("method", std::string("fft"));
  EXPECT_EQ(message({1, 3, 4, 4}, {3, 2, 3, 3}, method),
            prefix + "attribute 'method' must be 'col2im' or 'conv', got 'fft'");
  EXPECT_THROW(compile_deconv({1, 3, 4, 4, 4}, {3, 2, 3, 3, 3}, {}), ModelError);  // 3-D
  Attributes kernel;
  kernel.set("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_THROW(compile_deconv({1, 3, 4, 4}, {3, 2, 3, 3}, kernel), ModelError);
  Attributes unknown;
  unknown.set("bogus", int64_t{1});
  EXPECT_THROW(compile_deconv({1, 3, 4, 4}, {3, 2, 3, 3}, unknown), ModelError);
}

}  // namespace
}  // namespace minfer::test
