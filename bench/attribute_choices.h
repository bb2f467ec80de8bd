// The run-wide choices that set one attribute on every node of an op type
// (CompileOptions::attribute_overrides): engine_bench's --deconv_method and --lstm_plan,
// and minfer.load()'s deconv_method= and lstm_plan= keywords. This is the one table of them.
#pragma once

#include <string>
#include <vector>

#include "engine/compiled_model.h"

namespace minfer::cli {

struct AttributeChoice {
  std::string name;  // the flag without its dashes, and the Python keyword
  std::string op_type, attribute;
  std::vector<std::string> values;
  std::string description;
};

const std::vector<AttributeChoice>& attribute_choices();

// Appends the override that choice `name` = `value` stands for. Throws UsageError for an
// unknown choice or value, naming the choice and its values.
void choose_attribute(CompileOptions& options, const std::string& name, const std::string& value);

}  // namespace minfer::cli
