// The op lifecycle of a compile: each node's op is built once (and once more only for a
// node a pass rewrites), and each step's kernel is bound once, holding what it derived.
#include <gtest/gtest.h>

#include "engine/engine.h"

namespace minfer {
namespace {

const std::string kModels = std::string(MINFER_SOURCE_DIR) + "/models/";

TEST(OpLifecycle, EachNodesOpIsBuiltOncePerCompile) {
  const Graph g = load_model(kModels + "mobilenet_v1.json");
  CompileOptions off;
  off.passes = {false, false, false};
  auto plain = compile(g, off);
  EXPECT_EQ(plain->ops_built(), static_cast<int64_t>(g.nodes.size()));
  EXPECT_EQ(plain->steps().size(), g.nodes.size());

  // Folding a BatchNormalization changes the Conv's weights, not its attributes: its op
  // stays. Fusing an activation changes the producer's attributes: its op is built again.
  CompileOptions fold_only;
  fold_only.passes.fuse = false;
  EXPECT_EQ(compile(g, fold_only)->ops_built(), static_cast<int64_t>(g.nodes.size()));
  // So do marking a 1x1 layer's thread split and laying a node out in NCHWc; an inserted
  // Reorder is built once. (How many nodes run in NCHWc depends on the target:
  // MobileNetV1's run in NCHWc from its third depthwise layer on AVX-512, not at all on
  // AVX2, where its 1x1 layers prefer NCHW.)
  auto fused = compile(g);
  int64_t fusions = 0, splits = 0, layouts = 0;
  for (const PassLog& log : fused->pass_logs()) {
    if (log.pass == "fuse") fusions = static_cast<int64_t>(log.actions.size());
    if (log.pass == "thread_splits") splits = static_cast<int64_t>(log.actions.size());
    if (log.pass == "blocked_layout") layouts = static_cast<int64_t>(log.actions.size());
  }
  EXPECT_EQ(fusions, 27);
  EXPECT_EQ(splits, 12);
  EXPECT_EQ(fused->ops_built(), static_cast<int64_t>(g.nodes.size()) + fusions + splits + layouts);
}

TEST(OpLifecycle, StepsShareTheOpAndHoldOneBoundKernel) {
  auto model = compile(load_model(kModels + "small_cnn.json"));
  for (const Step& s : model->steps()) {
    ASSERT_TRUE(s.op);
    ASSERT_TRUE(s.kernel);
    // The cost was computed once, at bind time, from the op's signature.
    EXPECT_EQ(s.cost.macs, s.cost.macs_formula.value());
    EXPECT_EQ(s.cost.flops, s.cost.flops_formula.value());
  }
}

}  // namespace
}  // namespace minfer
