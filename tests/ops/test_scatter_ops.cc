// ScatterND, ScatterElements (and Scatter), GatherND and Dropout's mask on run-time data
// of each element type, against element-by-element loops written here from ONNX's
// definitions: negative and repeated indices, every reduction, batch_dims, an index out
// of range refused with its value and bound, and the costs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "graph/onnx_loader.h"
#include "tests/onnx_test_util.h"
#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

// A tensor of any element type, its values held as doubles.
struct Typed {
  Shape shape;
  DType dtype = DType::kFloat32;
  std::vector<double> values;
};

// Row-major flat position of `coord` in `shape`, and back.
int64_t ravel(const Shape& coord, const Shape& shape) {
  int64_t at = 0;
  for (size_t d = 0; d < shape.size(); ++d) at = at * shape[d] + coord[d];
  return at;
}
Shape unravel(int64_t at, const Shape& shape) {
  Shape coord(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coord[d] = at % shape[d];
    at /= shape[d];
  }
  return coord;
}

// One `op_type` node whose inputs are all run-time graph inputs: float32 and int64 fed
// directly, bool fed as float32 through a Cast (a session takes no bool input).
// Returns its outputs as doubles, or throws what compiling or running throws.
std::vector<Typed> run_typed(const std::string& op_type, const std::vector<Typed>& inputs, const Attributes& attrs,
                             int num_outputs = 1) {
  Graph g;
  g.name = "test_" + op_type;
  g.source = "<test>";
  Node node{"node", op_type, {}, {}, attrs};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    if (inputs[i].dtype == DType::kBool) {
      g.inputs.push_back({name + "_f", inputs[i].shape});
      Node cast{"cast" + std::to_string(i), "Cast", {name + "_f"}, {name}, {}};
      cast.attrs.set("to", int64_t{9});  // BOOL
      g.nodes.push_back(cast);
    } else {
      g.inputs.push_back({name, inputs[i].shape, inputs[i].dtype});
    }
    node.inputs.push_back(name);
  }
  for (int o = 0; o < num_outputs; ++o) {
    node.outputs.push_back("out" + std::to_string(o));
    g.outputs.push_back(node.outputs.back());
  }
  g.nodes.push_back(node);
  Session s(compile(std::move(g)));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    if (inputs[i].dtype == DType::kInt64) {
      const std::vector<int64_t> v(inputs[i].values.begin(), inputs[i].values.end());
      s.set_input(name, std::span<const int64_t>(v));
    } else {
      const std::vector<float> v(inputs[i].values.begin(), inputs[i].values.end());
      s.set_input(inputs[i].dtype == DType::kBool ? name + "_f" : name, std::span<const float>(v));
    }
  }
  s.run();
  std::vector<Typed> outputs;
  for (int o = 0; o < num_outputs; ++o) {
    const Session::Value v = s.value("out" + std::to_string(o));
    Typed t{v.type.shape, v.type.dtype, {}};
    for (int64_t i = 0, n = num_elements(v.type.shape); i < n; ++i) {
      switch (v.type.dtype) {
        case DType::kFloat32: t.values.push_back(reinterpret_cast<const float*>(v.data)[i]); break;
        case DType::kInt64: t.values.push_back(static_cast<double>(reinterpret_cast<const int64_t*>(v.data)[i])); break;
        case DType::kBool: t.values.push_back(reinterpret_cast<const uint8_t*>(v.data)[i]); break;
      }
    }
    outputs.push_back(std::move(t));
  }
  return outputs;
}

Attributes attrs_of(std::initializer_list<std::pair<const char*, std::string>> strings,
                    std::initializer_list<std::pair<const char*, int64_t>> ints = {}) {
  Attributes a;
  for (const auto& [k, v] : strings) a.set(k, v);
  for (const auto& [k, v] : ints) a.set(k, v);
  return a;
}

// numpy's combination of an old value and an update under each reduction; bool's
// add is or, its mul and.
double reduce(const std::string& reduction, DType dtype, double old, double update) {
  if (reduction == "none") return update;
  if (dtype == DType::kBool) {
    const bool a = old != 0, b = update != 0;
    return (reduction == "add" || reduction == "max") ? (a || b) : (a && b);
  }
  if (reduction == "add") return dtype == DType::kFloat32 ? double(float(old) + float(update)) : old + update;
  if (reduction == "mul") return dtype == DType::kFloat32 ? double(float(old) * float(update)) : old * update;
  if (reduction == "max") return std::max(old, update);
  return std::min(old, update);
}

// Values of a type: floats in [-2, 2], small integers, or 0/1.
std::vector<double> values_of(DType dtype, int64_t n, std::mt19937& rng) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    if (dtype == DType::kFloat32)
      x = std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);
    else if (dtype == DType::kInt64)
      x = static_cast<double>(std::uniform_int_distribution<int>(-5, 5)(rng));
    else
      x = std::uniform_int_distribution<int>(0, 1)(rng);
  }
  return v;
}

// An index into an axis of size `dim`: in [-dim, dim), so negative ones come up.
double any_index(int64_t dim, std::mt19937& rng) {
  return static_cast<double>(std::uniform_int_distribution<int64_t>(-dim, dim - 1)(rng));
}

int64_t from_start(double index, int64_t dim) {
  const auto i = static_cast<int64_t>(index);
  return i < 0 ? i + dim : i;
}

const char* const kReductions[] = {"none", "add", "mul", "max", "min"};
const DType kTypes[] = {DType::kFloat32, DType::kInt64, DType::kBool};

// ONNX ScatterND, element by element: updates[u_0..u_{q-2}, t...] goes to
// output[indices[u_0..u_{q-2}, :], t...].
std::vector<double> naive_scatter_nd(const Typed& data, const Typed& indices, const Typed& updates,
                                     const std::string& reduction) {
  std::vector<double> out = data.values;
  const size_t q = indices.shape.size();
  const int64_t k = indices.shape.back();
  for (int64_t u = 0; u < static_cast<int64_t>(updates.values.size()); ++u) {
    const Shape uc = unravel(u, updates.shape);
    Shape tuple_at(uc.begin(), uc.begin() + static_cast<std::ptrdiff_t>(q - 1));
    tuple_at.push_back(0);
    Shape coord;
    for (int64_t j = 0; j < k; ++j) {
      tuple_at.back() = j;
      coord.push_back(from_start(indices.values[ravel(tuple_at, indices.shape)], data.shape[j]));
    }
    coord.insert(coord.end(), uc.begin() + static_cast<std::ptrdiff_t>(q - 1), uc.end());
    double& at = out[ravel(coord, data.shape)];
    at = reduce(reduction, data.dtype, at, updates.values[u]);
  }
  return out;
}

TEST(ScatterND, MatchesTheDefinitionForEveryTypeReductionAndRank) {
  std::mt19937 rng(7);
  struct Case {
    Shape data, indices;  // indices' last axis: the tuple length k
  };
  const Case cases[] = {{{6}, {4, 1}},       {{4, 5}, {3, 2}},       {{4, 5}, {2, 3, 1}}, {{3, 4, 5}, {2, 2}},
                        {{3, 4, 5}, {5, 1}}, {{2, 3, 4}, {2, 2, 3}}, {{1, 3, 2}, {7, 3}}, {{5, 2, 3, 2}, {3, 1}}};
  for (const Case& c : cases)
    for (DType dtype : kTypes)
      for (const char* reduction : kReductions) {
        const int64_t k = c.indices.back();
        Shape u(c.indices.begin(), c.indices.end() - 1);
        u.insert(u.end(), c.data.begin() + k, c.data.end());
        Typed data{c.data, dtype, values_of(dtype, num_elements(c.data), rng)};
        Typed indices{c.indices, DType::kInt64, {}};
        for (int64_t i = 0; i < num_elements(c.indices); ++i)
          indices.values.push_back(any_index(c.data[i % k], rng));  // many tuples repeat
        Typed updates{u, dtype, values_of(dtype, num_elements(u), rng)};
        SCOPED_TRACE(shape_str(c.data) + " by " + shape_str(c.indices) + " " + dtype_name(dtype) + " " + reduction);
        const auto got = run_typed("ScatterND", {data, indices, updates}, attrs_of({{"reduction", reduction}}));
        EXPECT_EQ(got[0].shape, c.data);
        EXPECT_EQ(got[0].dtype, dtype);
        EXPECT_EQ(got[0].values, naive_scatter_nd(data, indices, updates, reduction));
      }
}

// Hand-worked: repeated indices accumulate under add and mul; the last write wins under
// none; -1 is the last element.
TEST(ScatterND, RepeatedIndicesAccumulate) {
  const Typed data{{5}, DType::kFloat32, {1, 2, 3, 4, 5}};
  const Typed indices{{4, 1}, DType::kInt64, {1, 1, -1, 1}};
  const Typed updates{{4}, DType::kFloat32, {10, 20, 30, 40}};
  const auto run = [&](const char* r) {
    return run_typed("ScatterND", {data, indices, updates}, attrs_of({{"reduction", r}}))[0].values;
  };
  EXPECT_EQ(run("add"), (std::vector<double>{1, 72, 3, 4, 35}));
  EXPECT_EQ(run("mul"), (std::vector<double>{1, 16000, 3, 4, 150}));
  EXPECT_EQ(run("max"), (std::vector<double>{1, 40, 3, 4, 30}));
  EXPECT_EQ(run("min"), (std::vector<double>{1, 2, 3, 4, 5}));
  EXPECT_EQ(run("none"), (std::vector<double>{1, 40, 3, 4, 30}));
}

// ONNX ScatterElements: updates[c] goes to output[c with c[axis] = indices[c]].
std::vector<double> naive_scatter_elements(const Typed& data, const Typed& indices, const Typed& updates, int64_t axis,
                                           const std::string& reduction) {
  std::vector<double> out = data.values;
  for (int64_t i = 0; i < static_cast<int64_t>(updates.values.size()); ++i) {
    Shape c = unravel(i, indices.shape);
    c[axis] = from_start(indices.values[i], data.shape[axis]);
    double& at = out[ravel(c, data.shape)];
    at = reduce(reduction, data.dtype, at, updates.values[i]);
  }
  return out;
}

TEST(ScatterElements, MatchesTheDefinitionForEveryTypeReductionAndAxis) {
  std::mt19937 rng(11);
  struct Case {
    Shape data, indices;
  };
  const Case cases[] = {{{7}, {5}}, {{3, 4}, {2, 6}}, {{3, 4}, {3, 2}}, {{2, 3, 4}, {2, 2, 3}}, {{2, 3, 4}, {1, 3, 4}}};
  for (const Case& c : cases)
    for (int64_t axis = -static_cast<int64_t>(c.data.size()); axis < static_cast<int64_t>(c.data.size()); ++axis) {
      const int64_t a = axis < 0 ? axis + static_cast<int64_t>(c.data.size()) : axis;
      bool fits = true;  // off the axis, indices may not be larger than data
      for (size_t d = 0; d < c.data.size(); ++d) fits = fits && (d == size_t(a) || c.indices[d] <= c.data[d]);
      if (!fits) continue;
      for (DType dtype : kTypes)
        for (const char* reduction : kReductions) {
          Typed data{c.data, dtype, values_of(dtype, num_elements(c.data), rng)};
          Typed indices{c.indices, DType::kInt64, {}};
          for (int64_t i = 0; i < num_elements(c.indices); ++i) indices.values.push_back(any_index(c.data[a], rng));
          Typed updates{c.indices, dtype, values_of(dtype, num_elements(c.indices), rng)};
          SCOPED_TRACE(shape_str(c.data) + " by " + shape_str(c.indices) + " axis " + std::to_string(axis) + " " +
                       dtype_name(dtype) + " " + reduction);
          const auto got = run_typed("ScatterElements", {data, indices, updates},
                                     attrs_of({{"reduction", reduction}}, {{"axis", axis}}));
          EXPECT_EQ(got[0].values, naive_scatter_elements(data, indices, updates, a, reduction));
        }
    }
}

// Scatter (opset 9, 10) is ScatterElements without reduction, which it does not take.
TEST(ScatterElements, ScatterIsTheFormWithoutReduction) {
  const Typed data{{2, 3}, DType::kFloat32, {0, 0, 0, 0, 0, 0}};
  const Typed indices{{2, 2}, DType::kInt64, {2, -3, 0, 1}};
  const Typed updates{{2, 2}, DType::kFloat32, {1, 2, 3, 4}};
  EXPECT_EQ(run_typed("Scatter", {data, indices, updates}, attrs_of({}, {{"axis", 1}}))[0].values,
            (std::vector<double>{2, 0, 1, 3, 4, 0}));
  EXPECT_THROW(run_typed("Scatter", {data, indices, updates}, attrs_of({{"reduction", "add"}})), ModelError);
  EXPECT_THROW(run_typed("ScatterElements", {data, indices, updates}, attrs_of({{"reduction", "sum"}})), ModelError);
}

// ONNX GatherND, element by element: output[o] = data[o[:b], indices[o[:q-1], :], o[q-1:]].
std::vector<double> naive_gather_nd(const Typed& data, const Typed& indices, int64_t b, const Shape& out_shape) {
  const size_t q = indices.shape.size();
  const int64_t k = indices.shape.back();
  std::vector<double> out;
  for (int64_t o = 0; o < num_elements(out_shape); ++o) {
    const Shape oc = unravel(o, out_shape);
    Shape coord(oc.begin(), oc.begin() + b);
    Shape tuple_at(oc.begin(), oc.begin() + static_cast<std::ptrdiff_t>(q - 1));
    tuple_at.push_back(0);
    for (int64_t j = 0; j < k; ++j) {
      tuple_at.back() = j;
      coord.push_back(from_start(indices.values[ravel(tuple_at, indices.shape)], data.shape[b + j]));
    }
    coord.insert(coord.end(), oc.begin() + static_cast<std::ptrdiff_t>(q - 1), oc.end());
    out.push_back(data.values[ravel(coord, data.shape)]);
  }
  return out;
}

TEST(GatherND, MatchesTheDefinitionWithBatchDims) {
  std::mt19937 rng(13);
  struct Case {
    Shape data, indices;
    int64_t batch_dims;
  };
  const Case cases[] = {{{2, 2}, {2, 2}, 0},          {{2, 2}, {2, 1}, 0},
                        {{2, 2, 2}, {2, 1, 2}, 0},    {{2, 2, 2}, {2, 1}, 1},
                        {{3, 4, 5}, {3, 2, 1}, 1},    {{3, 4, 5}, {3, 6, 2}, 1},
                        {{2, 3, 4, 5}, {2, 3, 1}, 2}, {{2, 3, 4, 5}, {2, 3, 7, 2}, 2},
                        {{4, 3, 2}, {5, 3}, 0},       {{2, 3, 4}, {2, 3, 1}, 0}};
  for (const Case& c : cases)
    for (DType dtype : kTypes) {
      const int64_t k = c.indices.back(), b = c.batch_dims;
      Typed data{c.data, dtype, values_of(dtype, num_elements(c.data), rng)};
      Typed indices{c.indices, DType::kInt64, {}};
      for (int64_t i = 0; i < num_elements(c.indices); ++i) indices.values.push_back(any_index(c.data[b + i % k], rng));
      Shape out(c.indices.begin(), c.indices.end() - 1);
      out.insert(out.end(), c.data.begin() + b + k, c.data.end());
      SCOPED_TRACE(shape_str(c.data) + " by " + shape_str(c.indices) + " batch_dims " + std::to_string(b) + " " +
                   dtype_name(dtype));
      const auto got = run_typed("GatherND", {data, indices}, attrs_of({}, {{"batch_dims", b}}));
      EXPECT_EQ(got[0].shape, out);
      EXPECT_EQ(got[0].values, naive_gather_nd(data, indices, b, out));
    }
}

// The spec's batch_dims example, worked by hand: each batch row picks from its own matrix.
TEST(GatherND, BatchDimsPickWithinEachBatch) {
  const Typed data{{2, 2, 2}, DType::kFloat32, {0, 1, 2, 3, 4, 5, 6, 7}};
  const Typed indices{{2, 1}, DType::kInt64, {1, 0}};
  const auto got = run_typed("GatherND", {data, indices}, attrs_of({}, {{"batch_dims", 1}}));
  EXPECT_EQ(got[0].shape, (Shape{2, 2}));
  EXPECT_EQ(got[0].values, (std::vector<double>{2, 3, 4, 5}));
}

// An index out of range stops the run with the node, the index and the axis' size.
TEST(ScatterOps, AnIndexOutOfRangeIsRefusedAtRunTime) {
  struct Case {
    const char* op;
    std::vector<Typed> inputs;
    Attributes attrs;
    const char* message;
  };
  const Typed data{{4, 3}, DType::kFloat32, std::vector<double>(12, 1.0)};
  const Case cases[] = {
      {"ScatterND",
       {data, {{2, 1}, DType::kInt64, {0, 4}}, {{2, 3}, DType::kFloat32, std::vector<double>(6, 2.0)}},
       {},
       "index 4 is out of range for axis 0 of size 4"},
      {"ScatterND",
       {data, {{1, 2}, DType::kInt64, {1, -4}}, {{1}, DType::kFloat32, {2.0}}},
       {},
       "index -4 is out of range for axis 1 of size 3"},
      {"ScatterElements",
       {data, {{1, 3}, DType::kInt64, {0, -5, 1}}, {{1, 3}, DType::kFloat32, {2, 2, 2}}},
       {},
       "index -5 is out of range for axis 0 of size 4"},
      {"GatherND", {data, {{2, 2}, DType::kInt64, {0, 0, 1, 3}}}, {}, "index 3 is out of range for axis 1 of size 3"},
      {"GatherND",
       {data, {{4, 1}, DType::kInt64, {0, 1, 2, -4}}},
       attrs_of({}, {{"batch_dims", 1}}),
       "index -4 is out of range for axis 1 of size 3"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    try {
      run_typed(c.op, c.inputs, c.attrs);
      ADD_FAILURE() << "no error";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'node'"), std::string::npos) << e.what();
    }
  }
}

// With every input a constant the constant folder runs the kernel: the same refusal, as
// a compile error naming the node.
TEST(ScatterOps, AnIndexOutOfRangeIsRefusedWhenFolded) {
  Graph g;
  g.source = "<folded_scatter>";
  g.initializers["data"] = Tensor({4}, {1.0f, 2.0f, 3.0f, 4.0f});
  g.initializers["indices"] = Tensor({1, 1}, std::vector<int64_t>{-5});
  g.initializers["updates"] = Tensor({1}, {9.0f});
  g.nodes.push_back({"scatter", "ScatterND", {"data", "indices", "updates"}, {"y"}, {}});
  g.outputs = {"y"};
  try {
    compile(std::move(g));
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'scatter' (ScatterND): index -5 is out of range for axis 0 of size 4"),
              std::string::npos)
        << e.what();
  }
}

// Every index is checked before anything is written: after a run refused for its last
// index, the output still holds the previous run's values.
TEST(ScatterOps, NothingIsWrittenBeforeTheIndicesAreChecked) {
  for (const char* op : {"ScatterND", "ScatterElements"}) {
    SCOPED_TRACE(op);
    Graph g;
    g.source = "<scatter_checks_first>";
    const bool nd = std::string(op) == "ScatterND";
    g.inputs = {{"x", {4, 3}}, {"i", nd ? Shape{2, 1} : Shape{2, 3}, DType::kInt64}, {"u", {2, 3}}};
    g.nodes.push_back({"scatter", op, {"x", "i", "u"}, {"y"}, {}});
    g.outputs = {"y"};
    Session s(compile(std::move(g)));
    const std::vector<float> x = iota_values(12), u = {10, 11, 12, 20, 21, 22};
    s.set_input("x", x);
    s.set_input("u", u);
    const std::vector<int64_t> good = nd ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1, 1, 1, 2, 2, 2};
    s.set_input("i", std::span<const int64_t>(good));
    s.run();
    const auto y = s.output("y");
    const std::vector<float> before(y.begin(), y.end());
    EXPECT_NE(before, x);
    const std::vector<int64_t> bad = nd ? std::vector<int64_t>{0, 4} : std::vector<int64_t>{0, 0, 0, 3, 3, 4};
    s.set_input("i", std::span<const int64_t>(bad));
    EXPECT_THROW(s.run(), UsageError);
    const auto after = s.output("y");
    EXPECT_EQ(std::vector<float>(after.begin(), after.end()), before);
  }
}

// A scatter whose data dies there writes over it (the planner's in-place reuse): the
// result is the same, and a second run with other indices starts again from the data.
TEST(ScatterOps, InPlaceOverDataThatDiesThere) {
  Graph g;
  g.source = "<in_place_scatter>";
  g.inputs = {{"x", {4, 3}}, {"i", {2, 1}, DType::kInt64}, {"u", {2, 3}}};
  g.nodes.push_back({"neg", "Neg", {"x"}, {"d"}, {}});
  g.nodes.push_back({"scatter", "ScatterND", {"d", "i", "u"}, {"y"}, {}});
  g.outputs = {"y"};
  auto model = compile(std::move(g));
  bool shared = false;
  for (const BufferSpan& b : model->buffers())
    shared = shared || (std::count(b.tensors.begin(), b.tensors.end(), "d") &&
                        std::count(b.tensors.begin(), b.tensors.end(), "y"));
  EXPECT_TRUE(shared) << "the scatter's output has a buffer of its own";
  Session s(model);
  const std::vector<float> x = iota_values(12), u = {10, 11, 12, 20, 21, 22};
  s.set_input("x", x);
  s.set_input("u", u);
  for (const std::vector<int64_t>& idx : {std::vector<int64_t>{0, 2}, std::vector<int64_t>{3, -3}}) {
    s.set_input("i", std::span<const int64_t>(idx));
    s.run();
    std::vector<float> want(12);
    for (int i = 0; i < 12; ++i) want[i] = -x[i];
    for (int m = 0; m < 2; ++m)
      for (int j = 0; j < 3; ++j) want[from_start(double(idx[m]), 4) * 3 + j] = u[m * 3 + j];
    const auto y = s.output("y");
    EXPECT_EQ(std::vector<float>(y.begin(), y.end()), want);
  }
}

TEST(ScatterOps, ShapesAndTypesAreChecked) {
  const auto error = [](const std::string& op, std::vector<Typed> inputs, Attributes attrs = {}) -> std::string {
    try {
      run_typed(op, inputs, attrs);
    } catch (const ModelError& e) {
      return e.what();
    }
    return "";
  };
  const Typed data{{4, 3}, DType::kFloat32, std::vector<double>(12, 0.0)};
  EXPECT_NE(error("ScatterND", {data, {{2, 1}, DType::kInt64, {0, 1}}, {{2, 2}, DType::kFloat32, {1, 2, 3, 4}}})
                .find("updates 2x2 must have shape 2x3"),
            std::string::npos);
  EXPECT_NE(error("ScatterND", {data, {{1, 3}, DType::kInt64, {0, 1, 2}}, {{1}, DType::kFloat32, {1}}})
                .find("tuples of 3 coordinates"),
            std::string::npos);
  EXPECT_NE(error("ScatterND", {data, {{1, 1}, DType::kInt64, {0}}, {{1, 3}, DType::kInt64, {1, 2, 3}}})
                .find("they must have one type"),
            std::string::npos);
  EXPECT_NE(error("ScatterElements",
                  {data, {{5, 1}, DType::kInt64, {0, 0, 0, 0, 0}}, {{5, 1}, DType::kFloat32, {1, 1, 1, 1, 1}}},
                  attrs_of({}, {{"axis", 1}}))
                .find("exceed data"),
            std::string::npos);
  EXPECT_NE(
      error("GatherND", {data, {{3, 1}, DType::kInt64, {0, 0, 0}}}, attrs_of({}, {{"batch_dims", 1}})).find("differ"),
      std::string::npos);
  EXPECT_NE(error("GatherND", {data, {{2, 1}, DType::kFloat32, {0, 0}}}).find("indices must be integers"),
            std::string::npos);
}

// 0 FLOPs, 1 per update element with a reduction; indices are data read (8 bytes each)
// and, as a constant, parameters.
TEST(ScatterOps, Costs) {
  const auto cost = [](const std::string& op, const char* reduction, int64_t axis) {
    Graph g;
    g.source = "<scatter_cost>";
    g.inputs = {{"data", {4, 5}}, {"updates", {3, 5}}};
    g.initializers["indices"] =
        Tensor({3, op == "ScatterND" ? 1 : 5}, std::vector<int64_t>(op == "ScatterND" ? 3 : 15, 1));
    Node n{"node", op, {"data", "indices", "updates"}, {"y"}, {}};
    n.attrs.set("reduction", std::string(reduction));
    if (op != "ScatterND") n.attrs.set("axis", axis);
    g.nodes.push_back(n);
    g.outputs = {"y"};
    return compile(std::move(g))->steps()[0].cost;
  };
  for (const char* op : {"ScatterND", "ScatterElements"}) {
    SCOPED_TRACE(op);
    const int64_t indices = std::string(op) == "ScatterND" ? 3 : 15;
    const Cost none = cost(op, "none", 0);
    EXPECT_EQ(none.macs, 0);
    EXPECT_EQ(none.flops, 0);
    EXPECT_EQ(none.params, indices);
    EXPECT_EQ(none.bytes_read, 4 * 20 + 8 * indices + 4 * 15);
    EXPECT_EQ(none.bytes_written, 4 * 20);
    for (const char* r : {"add", "mul", "max", "min"}) EXPECT_EQ(cost(op, r, 0).flops, 15) << r;
  }
}

// Dropout at inference: output 0 is the input, the optional mask (bool) all true.
// training_mode true stays refused but with a ratio of 0.
TEST(DropoutMask, IsAllTrueAtInference) {
  std::mt19937 rng(3);
  const Typed x{{2, 3, 4}, DType::kFloat32, values_of(DType::kFloat32, 24, rng)};
  const auto got = run_typed("Dropout", {x}, {}, 2);
  EXPECT_EQ(got[0].values, x.values);
  EXPECT_EQ(got[1].dtype, DType::kBool);
  EXPECT_EQ(got[1].shape, x.shape);
  EXPECT_EQ(got[1].values, std::vector<double>(24, 1.0));
  const OpResult cost = cost_of("Dropout", {input({2, 3, 4}, {})}, {}, 2);
  EXPECT_EQ(cost.cost.bytes_written, 4 * 24 + 24);  // the mask: a byte per element
  EXPECT_NE(compile_error("Dropout", {input({2, 3}, {}), weight({}, {0.5f}), weight({}, {1.0f})}, {}, 2)
                .find("training_mode=true is not supported"),
            std::string::npos);
  EXPECT_EQ(compile_error("Dropout", {input({2, 3}, {}), weight({}, {0.5f}), weight({}, {0.0f})}, {}, 2), "");
  // Training with a ratio of 0 drops nothing (torch's F.dropout(p=0.0) exports so).
  const OpResult zero = run_op("Dropout", {input({2, 3}, {1, 2, 3, 4, 5, 6}), weight({}, {0.0f}), weight({}, {1.0f})});
  EXPECT_EQ(zero.outputs[0], (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_NE(compile_error("Dropout", {input({2, 3}, {}), {}, weight({}, {1.0f})}).find("training_mode=true"),
            std::string::npos);  // the default ratio, 0.5
}

// A mask nothing reads goes with the Dropout (eliminate_identities); one a graph output
// or a node reads keeps it.
TEST(DropoutMask, AnUnreadMaskGoesWithTheNode) {
  const auto steps = [](bool mask_out, bool mask_read) {
    Graph g;
    g.source = "<dropout_mask>";
    g.inputs = {{"x", {2, 3}}};
    g.nodes.push_back({"drop", "Dropout", {"x"}, {"y", "mask"}, {}});
    g.nodes.push_back({"relu", "Relu", {"y"}, {"r"}, {}});
    g.outputs = {"r"};
    if (mask_read) {
      Node cast{"cast", "Cast", {"mask"}, {"m"}, {}};
      cast.attrs.set("to", int64_t{1});
      g.nodes.push_back(cast);
      g.outputs.push_back("m");
    }
    if (mask_out) g.outputs.push_back("mask");
    auto model = compile(std::move(g));
    std::vector<std::string> types;
    for (const Step& s : model->steps()) types.push_back(s.op_type);
    if (mask_out || mask_read) {
      Session s(model);
      s.set_input("x", std::vector<float>{1, -2, 3, -4, 5, -6});
      s.run();
      const Session::Value m = s.value(mask_out ? "mask" : "m");
      for (int i = 0; i < 6; ++i)
        EXPECT_EQ(mask_out ? double(reinterpret_cast<const uint8_t*>(m.data)[i])
                           : double(reinterpret_cast<const float*>(m.data)[i]),
                  1.0);
    }
    return types;
  };
  EXPECT_EQ(steps(false, false), (std::vector<std::string>{"Relu"}));
  EXPECT_EQ(steps(true, false), (std::vector<std::string>{"Dropout", "Relu"}));
  EXPECT_EQ(steps(false, true), (std::vector<std::string>{"Dropout", "Relu", "Cast"}));
}

// Before opset 10 the mask had the data's type; it is refused rather than made bool.
TEST(DropoutMask, BeforeOpset10TheMaskIsRefused) {
  for (int opset : {9, 12}) {
    OnnxBuilder b(opset);
    b.input("x", {2, 3}).output("y").output("m", opset < 10 ? DataType::kFloat : DataType::kBool);
    b.node("Dropout", {"x"}, {"y", "m"}, "drop");
    std::string error;
    try {
      compile(load_onnx(b.save("dropout_mask.onnx")));
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (opset < 10)
      EXPECT_NE(error.find("the mask output before opset 10"), std::string::npos) << error;
    else
      EXPECT_EQ(error, "");
  }
}

}  // namespace
}  // namespace minfer::test
