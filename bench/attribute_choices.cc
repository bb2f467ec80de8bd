#include "bench/attribute_choices.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "graph/errors.h"

namespace minfer::cli {

const std::vector<AttributeChoice>& attribute_choices() {
  static const std::vector<AttributeChoice> choices = {
      {"deconv_method",
       "ConvTranspose",
       "method",
       {"col2im", "conv"},
       "ConvTranspose method for every node (overrides the model's)"},
      {"lstm_plan",
       "LSTM",
       "plan",
       {"auto", "minimal", "fused"},
       "Memory plan of every LSTM cell (default: each node's 'plan', else auto: fused within 1 MiB of gate inputs)"},
      {"gru_plan",
       "GRU",
       "plan",
       {"auto", "minimal", "fused"},
       "Memory plan of every GRU cell (default: each node's 'plan', else auto: fused within 1 MiB of gate inputs)"},
      {"conv_algorithm",
       "Conv",
       "algorithm",
       {"auto", "direct", "winograd"},
       "3x3 Conv algorithm: Winograd where it measured faster, never, or wherever it applies"},
  };
  return choices;
}

void choose_attribute(CompileOptions& options, const std::string& name, const std::string& value) {
  const auto& choices = attribute_choices();
  auto choice = std::find_if(choices.begin(), choices.end(), [&](const AttributeChoice& c) { return c.name == name; });
  if (choice == choices.end()) throw UsageError(fmt::format("'{}' is not a run-wide choice", name));
  if (std::find(choice->values.begin(), choice->values.end(), value) == choice->values.end())
    throw UsageError(fmt::format("{} '{}': must be one of {}", name, value, fmt::join(choice->values, ", ")));
  options.attribute_overrides.push_back({choice->op_type, choice->attribute, value});
}

}  // namespace minfer::cli
