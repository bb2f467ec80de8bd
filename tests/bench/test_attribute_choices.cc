// The one table of run-wide attribute choices (--deconv_method, --lstm_plan; minfer.load's
// keywords of the same names): each choice becomes an override of one attribute.
#include <gtest/gtest.h>

#include "bench/attribute_choices.h"
#include "graph/errors.h"

namespace minfer::cli {
namespace {

TEST(AttributeChoices, EachValueBecomesAnOverrideInOrder) {
  CompileOptions options;
  choose_attribute(options, "deconv_method", "conv");
  choose_attribute(options, "lstm_plan", "fused");
  ASSERT_EQ(options.attribute_overrides.size(), 2u);
  EXPECT_EQ(options.attribute_overrides[0].op_type, "ConvTranspose");
  EXPECT_EQ(options.attribute_overrides[0].attribute, "method");
  EXPECT_EQ(std::get<std::string>(options.attribute_overrides[0].value), "conv");
  EXPECT_EQ(options.attribute_overrides[1].op_type, "LSTM");
  EXPECT_EQ(options.attribute_overrides[1].attribute, "plan");
  EXPECT_EQ(std::get<std::string>(options.attribute_overrides[1].value), "fused");
}

TEST(AttributeChoices, UnknownChoicesAndValuesAreRefused) {
  CompileOptions options;
  try {
    choose_attribute(options, "lstm_plan", "big");
    ADD_FAILURE() << "accepted lstm_plan 'big'";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "lstm_plan 'big': must be one of auto, minimal, fused");
  }
  EXPECT_THROW(choose_attribute(options, "conv_method", "conv"), UsageError);
  EXPECT_TRUE(options.attribute_overrides.empty());
}

}  // namespace
}  // namespace minfer::cli
