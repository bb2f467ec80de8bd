// The pieces of engine_bench --compare: taking the two sides off the command line,
// reading each side's flags over the run-wide ones, and interleaving the runs.
#include <gtest/gtest.h>

#include "bench/compare.h"
#include "engine/engine.h"

namespace minfer::cli {
namespace {

using Args = std::vector<std::string>;

TEST(TakeCompareSides, TakesExactlyTheTwoArgumentsAfterCompare) {
  const CompareArgs c =
      take_compare_sides({"--model", "m.json", "--compare", "--fold_bn 0", "--fold_bn 1", "--num_runs", "3"});
  EXPECT_EQ(c.sides, (Args{"--fold_bn 0", "--fold_bn 1"}));
  EXPECT_EQ(c.rest, (Args{"--model", "m.json", "--num_runs", "3"}));
  // A side may be empty (the run-wide settings) or look like any option.
  EXPECT_EQ(take_compare_sides({"--compare", "", "--num_runs"}).sides, (Args{"", "--num_runs"}));
  EXPECT_EQ(take_compare_sides({"--compare", "a.json", "b.json"}).rest, Args{});
  EXPECT_TRUE(take_compare_sides({"--num_runs", "3"}).sides.empty());
  EXPECT_THROW(take_compare_sides({"--compare", "a.json"}), UsageError);
  EXPECT_THROW(take_compare_sides({"--compare"}), UsageError);
  EXPECT_THROW(take_compare_sides({"--compare", "a.json", "b.json", "c.json"}), UsageError);
  EXPECT_THROW(take_compare_sides({"--compare", "a.json", "b.json", "--compare", "a.json", "b.json"}), UsageError);
}

TEST(ParseSide, OverridesTheRunWideSettings) {
  SideSettings defaults{"m.json", {{"x", {1, 3, 8, 8}}}, {}};
  defaults.options.num_threads = 2;
  defaults.options.passes.fold_bn = false;
  defaults.options.attribute_overrides.push_back({"ConvTranspose", "method", std::string("conv")});

  const SideSettings same = parse_side("A", "", defaults);
  EXPECT_EQ(same.model_path, "m.json");
  EXPECT_EQ(same.input_shapes, (std::map<std::string, Shape>{{"x", {1, 3, 8, 8}}}));
  EXPECT_EQ(same.options.num_threads, 2);
  EXPECT_FALSE(same.options.passes.fold_bn);
  EXPECT_EQ(same.options.attribute_overrides.size(), 1u);

  const SideSettings b = parse_side("B",
                                    "other.onnx --fold_bn 1 --clean 0 --num_threads 1 --deconv_method col2im "
                                    "--lstm_plan fused --input_shape 'x:2,3,8,8'",
                                    defaults);
  EXPECT_EQ(b.model_path, "other.onnx");
  EXPECT_EQ(b.input_shapes, (std::map<std::string, Shape>{{"x", {2, 3, 8, 8}}}));
  EXPECT_EQ(b.options.num_threads, 1);
  EXPECT_TRUE(b.options.passes.fold_bn);
  EXPECT_FALSE(b.options.passes.clean);
  // Overrides apply in order, so the side's come after the run-wide ones and win.
  ASSERT_EQ(b.options.attribute_overrides.size(), 3u);
  EXPECT_EQ(b.options.attribute_overrides[1].op_type, "ConvTranspose");
  EXPECT_EQ(std::get<std::string>(b.options.attribute_overrides[1].value), "col2im");
  EXPECT_EQ(b.options.attribute_overrides[2].op_type, "LSTM");

  EXPECT_EQ(parse_side("B", "--model 'a b.json'", defaults).model_path, "a b.json");
  EXPECT_THROW(parse_side("A", "a.json b.json", defaults), UsageError);
  EXPECT_THROW(parse_side("A", "a.json --model b.json", defaults), UsageError);
  EXPECT_THROW(parse_side("A", "--num_runs 3", defaults), UsageError);
  EXPECT_THROW(parse_side("A", "--fold_bn", defaults), UsageError);
  EXPECT_THROW(parse_side("A", "--help", defaults), UsageError);
  EXPECT_THROW(parse_side("A", "--fold_bn 0", SideSettings{}), UsageError);  // no model anywhere
  try {
    parse_side("B", "--input_shape x:2,a", defaults);
    ADD_FAILURE() << "a bad --input_shape was accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--compare B '--input_shape x:2,a': --input_shape 'x:2,a': 'a' is not an integer");
  }
}

TEST(RunInterleaved, AlternatesTheOrderEachTurn) {
  auto model = compile(load_model(std::string(MINFER_SOURCE_DIR) + "/models/small_cnn.json"));
  Session a(model), b(model);
  int calls = 0;
  run_interleaved({&a, &b}, 3, 4, [&](int done) { EXPECT_EQ(done, ++calls); });
  EXPECT_EQ(calls, 2 * (3 + 4));
  // Warmup runs are not profiled; the profiled ones go A B, B A, A B, B A.
  ASSERT_EQ(a.profile().runs(), 4u);
  ASSERT_EQ(b.profile().runs(), 4u);
  for (size_t t = 0; t < 4; ++t) {
    const auto a_start = a.profile().timeline()[t].start, b_start = b.profile().timeline()[t].start;
    if (t % 2 == 0)
      EXPECT_LT(a_start, b_start) << "turn " << t;
    else
      EXPECT_LT(b_start, a_start) << "turn " << t;
    if (t > 0) {  // each turn after the one before
      EXPECT_LT(std::max(a.profile().timeline()[t - 1].start, b.profile().timeline()[t - 1].start),
                std::min(a_start, b_start));
    }
  }
}

}  // namespace
}  // namespace minfer::cli
