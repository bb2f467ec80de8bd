// docs/cost-model.md's worked examples, checked against the ops' own cost(): the table
// and the code cannot drift apart.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

// "1x64x112x112" -> {1, 64, 112, 112}
Shape parse_shape(const std::string& text) {
  Shape s;
  std::stringstream in(text);
  std::string dim;
  while (std::getline(in, dim, 'x')) s.push_back(std::stoll(dim));
  return s;
}

Attributes parse_attrs(const nlohmann::json& attrs) {
  Attributes a;
  for (const auto& item : attrs.items()) {
    const auto& v = item.value();
    if (v.is_number_integer())
      a.set(item.key(), v.get<int64_t>());
    else if (v.is_number())
      a.set(item.key(), v.get<double>());
    else if (v.is_string())
      a.set(item.key(), v.get<std::string>());
    else if (!v.empty() && v[0].is_string())
      a.set(item.key(), v.get<std::vector<std::string>>());
    else
      a.set(item.key(), v.get<std::vector<int64_t>>());
  }
  return a;
}

std::vector<nlohmann::json> doc_examples() {
  std::ifstream f(std::string(MINFER_SOURCE_DIR) + "/docs/cost-model.md");
  std::vector<nlohmann::json> examples;
  bool inside = false;
  for (std::string line; std::getline(f, line);) {
    if (line == "```cost-examples")
      inside = true;
    else if (line == "```")
      inside = false;
    else if (inside && !line.empty())
      examples.push_back(nlohmann::json::parse(line));
  }
  return examples;
}

TEST(CostModelDoc, ExamplesMatchTheCode) {
  const auto examples = doc_examples();
  ASSERT_GE(examples.size(), 20u) << "the examples block of docs/cost-model.md was not found";
  for (const auto& e : examples) {
    SCOPED_TRACE(e["what"].get<std::string>());
    std::vector<TestTensor> inputs;
    std::vector<size_t> int64_inputs;
    for (const auto& s : e["inputs"]) {
      std::string text = s;
      if (text.empty()) {  // an omitted optional input
        inputs.push_back({});
        continue;
      }
      const bool constant = text[0] == '*';
      if (constant) text = text.substr(1);
      // "int64:" before the shape marks int64 data (indices: "*int64:3x1=0,1,2").
      if (text.rfind("int64:", 0) == 0) {
        text = text.substr(6);
        int64_inputs.push_back(inputs.size());
      }
      // A constant's values follow '=' ("*4=1,1,2,2": Resize's scales); 0.5 each otherwise.
      std::vector<float> values;
      if (const size_t eq = text.find('='); eq != std::string::npos) {
        std::stringstream list(text.substr(eq + 1));
        for (std::string v; std::getline(list, v, ',');) values.push_back(std::stof(v));
        text = text.substr(0, eq);
      }
      const Shape shape = parse_shape(text);
      if (values.empty()) values.assign(num_elements(shape), 0.5f);
      inputs.push_back(constant ? weight(shape, values) : input(shape, {}));
    }
    const Attributes attrs = parse_attrs(e.value("attrs", nlohmann::json::object()));
    OpResult r;
    if (int64_inputs.empty()) {
      r = cost_of(e["op"], inputs, attrs, e.value("outputs", 1));
    } else {  // cost_of's graph with those inputs int64
      Graph g = single_op_graph(e["op"], inputs, attrs, e.value("outputs", 1));
      for (size_t i : int64_inputs) {
        const std::string name = "in" + std::to_string(i);
        const TestTensor& t = inputs[i];
        if (t.constant) g.initializers[name] = Tensor(t.shape, std::vector<int64_t>(t.data.begin(), t.data.end()));
        for (GraphInput& in : g.inputs)
          if (in.name == name) in.dtype = DType::kInt64;
      }
      const auto model = compile(std::move(g));
      r.cost = model->steps()[0].cost;
      r.kind = model->steps()[0].kind();
    }
    const std::pair<const char*, int64_t> fields[] = {{"macs", r.cost.macs},
                                                      {"flops", r.cost.flops},
                                                      {"params", r.cost.params},
                                                      {"bytes_read", r.cost.bytes_read},
                                                      {"bytes_written", r.cost.bytes_written}};
    int checked = 0;
    for (const auto& [field, value] : fields) {
      if (!e.contains(field)) continue;
      EXPECT_EQ(value, e[field].get<int64_t>()) << field;
      ++checked;
    }
    if (e.contains("kind")) {
      EXPECT_EQ(r.kind, e["kind"].get<std::string>());
    }
    EXPECT_GT(checked, 0) << "an example that checks nothing";
  }
}

}  // namespace
}  // namespace minfer::test
