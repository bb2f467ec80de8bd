// Depthwise-separable pairs found in compiled plans, with their MACs worked out by hand.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/separable_pairs.h"

namespace minfer {
namespace {

// A chain of nodes over one input [1, 8, 10, 10]; each node reads the previous output.
class Chain {
 public:
  explicit Chain(Shape input = {1, 8, 10, 10}) {
    g_.name = "chain";
    g_.source = "<test>";
    g_.inputs = {{"x", input}};
  }

  Chain& conv(const std::string& name, int64_t cin_per_group, int64_t cout, int64_t k, int64_t group,
              int64_t stride = 1) {
    const Shape w = {cout, cin_per_group, k, k};
    g_.initializers[name + ".W"] = Tensor{w, std::vector<float>(num_elements(w), 0.1f)};
    Attributes a;
    a.set("group", group);
    a.set("pads", std::vector<int64_t>(4, k / 2));
    a.set("strides", std::vector<int64_t>{stride, stride});
    return add(name, "Conv", {name + ".W"}, a);
  }

  Chain& batch_norm(const std::string& name, int64_t channels) {
    std::vector<std::string> params;
    for (const char* p : {".scale", ".B", ".mean", ".var"}) {
      g_.initializers[name + p] = Tensor{{channels}, std::vector<float>(channels, 1.0f)};
      params.push_back(name + p);
    }
    return add(name, "BatchNormalization", params, {});
  }

  Chain& op(const std::string& name, const std::string& type, Attributes a = {}) { return add(name, type, {}, a); }

  // Marks an intermediate tensor (a node's output) as a graph output too.
  Chain& expose(const std::string& tensor) {
    g_.outputs.push_back(tensor);
    return *this;
  }

  // BN folding off unless asked, so the chain's nodes keep their names.
  std::vector<SeparablePairRecord> pairs(bool fold_bn = false) {
    Graph g = g_;
    g.outputs.push_back(last_);
    CompileOptions options;
    options.passes.fold_bn = fold_bn;
    return find_separable_pairs(*compile(std::move(g), options));
  }

 private:
  Chain& add(const std::string& name, const std::string& type, const std::vector<std::string>& params, Attributes a) {
    Node n{name, type, {last_}, {name}, std::move(a)};
    n.inputs.insert(n.inputs.end(), params.begin(), params.end());
    g_.nodes.push_back(std::move(n));
    last_ = name;
    return *this;
  }

  Graph g_;
  std::string last_ = "x";
};

TEST(SeparablePairs, ThroughBatchNormAndActivations) {
  Attributes relu6;
  relu6.set("min", 0.0);
  relu6.set("max", 6.0);
  auto pairs = Chain()
                   .conv("dw", 1, 8, 3, 8)
                   .batch_norm("bn", 8)
                   .op("relu6", "Clip", relu6)
                   .op("act", "Relu")
                   .conv("pw", 8, 16, 1, 1)
                   .pairs();
  ASSERT_EQ(pairs.size(), 1u);
  const SeparablePairRecord& p = pairs[0];
  EXPECT_EQ(p.depthwise, "dw");
  EXPECT_EQ(p.pointwise, "pw");
  // The Clip runs fused in the BatchNormalization (not folded here); the Relu after it
  // stays a node of its own (an op fuses one activation).
  EXPECT_EQ(p.through, (std::vector<std::string>{"bn+relu6", "act"}));
  EXPECT_EQ(p.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(p.in_channels, 8);
  EXPECT_EQ(p.out_channels, 16);
  EXPECT_EQ(p.depthwise_macs, 3 * 3 * 8 * 10 * 10);     // 7,200
  EXPECT_EQ(p.pointwise_macs, 8 * 10 * 10 * 16);        // 12,800
  EXPECT_EQ(p.regular_macs, 3 * 3 * 8 * 10 * 10 * 16);  // 115,200
}

TEST(SeparablePairs, AfterBatchNormFolding) {
  auto pairs = Chain().conv("dw", 1, 8, 3, 8).batch_norm("bn", 8).op("act", "Relu").conv("pw", 8, 16, 1, 1).pairs(true);
  ASSERT_EQ(pairs.size(), 1u);
  // Fusion runs after folding: the Relu goes into the depthwise Conv's epilogue too.
  EXPECT_EQ(pairs[0].depthwise, "dw+bn+act");
  EXPECT_TRUE(pairs[0].through.empty());
  EXPECT_EQ(pairs[0].depthwise_macs, 3 * 3 * 8 * 10 * 10);
}

TEST(SeparablePairs, StridedDepthwiseWithMultiplier) {
  // [1, 4, 10, 10], depthwise x2 stride 2 -> [1, 8, 5, 5], pointwise 8 -> 6.
  auto pairs = Chain({1, 4, 10, 10}).conv("dw", 1, 8, 3, 4, 2).conv("pw", 8, 6, 1, 1).pairs();
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_TRUE(pairs[0].through.empty());
  EXPECT_EQ(pairs[0].depthwise_macs, 3 * 3 * 8 * 5 * 5);    // 1,800
  EXPECT_EQ(pairs[0].pointwise_macs, 8 * 5 * 5 * 6);        // 1,200
  EXPECT_EQ(pairs[0].regular_macs, 3 * 3 * 4 * 5 * 5 * 6);  // 5,400: a 3x3 stride-2 conv 4 -> 6
}

// Two MobileNet pairs at 256 channels, which on AVX-512 run in NCHWc (ops/blocked_layout.h:
// dw2 reads [1, 16, 7, 7, 16]): the figures are the channels', not the tensors' dimensions.
TEST(SeparablePairs, FiguresDoNotDependOnTheTensorsLayout) {
  auto pairs = Chain({1, 256, 7, 7})
                   .conv("dw1", 1, 256, 3, 256)
                   .conv("pw1", 256, 256, 1, 1)
                   .conv("dw2", 1, 256, 3, 256)
                   .conv("pw2", 256, 128, 1, 1)
                   .pairs();
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[1].in_channels, 256);
  EXPECT_EQ(pairs[1].out_channels, 128);
  EXPECT_EQ(pairs[1].depthwise_macs, 3 * 3 * 256 * 7 * 7);
  EXPECT_EQ(pairs[1].pointwise_macs, 256 * 7 * 7 * 128);
  EXPECT_EQ(pairs[1].regular_macs, 3 * 3 * 256 * 7 * 7 * 128);
}

TEST(SeparablePairs, OnlyCleanChainsCount) {
  // The depthwise result is also a graph output: used elsewhere.
  EXPECT_TRUE(Chain().conv("dw", 1, 8, 3, 8).expose("dw").conv("pw", 8, 16, 1, 1).pairs().empty());
  // A pool between them is not a per-element step.
  Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_TRUE(Chain().conv("dw", 1, 8, 3, 8).op("pool", "MaxPool", pool).conv("pw", 8, 16, 1, 1).pairs().empty());
  // Grouped, not depthwise; and the wrong order.
  EXPECT_TRUE(Chain().conv("g", 4, 8, 3, 2).conv("pw", 8, 16, 1, 1).pairs().empty());
  EXPECT_TRUE(Chain().conv("pw", 8, 16, 1, 1).conv("dw", 1, 16, 3, 16).pairs().empty());
  // Two pairs in a row, MobileNet style.
  auto two = Chain()
                 .conv("dw1", 1, 8, 3, 8)
                 .conv("pw1", 8, 8, 1, 1)
                 .conv("dw2", 1, 8, 3, 8)
                 .op("relu", "Relu")
                 .conv("pw2", 8, 4, 1, 1)
                 .pairs();
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].depthwise, "dw2+relu");  // the Relu fused into dw2
  EXPECT_TRUE(two[1].through.empty());
}

}  // namespace
}  // namespace minfer
