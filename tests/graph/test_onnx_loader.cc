// The ONNX importer on models built here with libonnx's protobuf classes: mapping of
// nodes, attributes and initializers; then, compiled, the folding of shape subgraphs,
// opset upgrades, and one-line refusals of what the engine lacks or of broken files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "engine/engine.h"
#include "graph/onnx_loader.h"
#include "graph/onnx_tensor.h"
#include "tests/onnx_test_util.h"
#include "tests/op_test_util.h"
#include "tests/temp_files.h"

namespace minfer::test {
namespace {

// Runs a loaded graph on the given inputs; returns its first output.
std::vector<float> run_graph(Graph graph, const std::map<std::string, std::vector<float>>& inputs,
                             Shape* out_shape = nullptr) {
  auto model = compile(std::move(graph));
  Session s(model);
  for (const auto& [name, data] : inputs) s.set_input(name, data);
  s.run();
  const std::string& out = model->graph().outputs.at(0);
  if (out_shape) *out_shape = s.shape(out);
  auto y = s.output(out);
  return {y.begin(), y.end()};
}

// The one-line error of loading and compiling the model.
std::string error_of(const std::string& path, const std::map<std::string, Shape>& shapes = {}) {
  try {
    compile(load_onnx(path, shapes));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(OnnxLoader, MapsNodesAttributesAndInitializers) {
  OnnxBuilder b;
  b.input("x", {1, 2, 5, 5}).input("W", {3, 2, 3, 3}).output("y");
  b.initializer("W", {3, 2, 3, 3}, random_values(54, 1)).initializer("B", {3}, {0.5f, -0.5f, 0.25f});
  auto& conv = b.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
  set_attr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(conv, "group", int64_t{1});
  set_attr(conv, "auto_pad", std::string("NOTSET"));
  set_attr(b.node("LeakyRelu", {"c"}, {"y"}), "alpha", 0.1f);
  const Graph g = load_onnx(b.save("conv.onnx"));

  // W is listed as an input too (older exporters do that): it is an initializer.
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].name, "x");
  EXPECT_EQ(g.inputs[0].shape, (Shape{1, 2, 5, 5}));
  EXPECT_EQ(float_values(g.initializers.at("B")), (std::vector<float>{0.5f, -0.5f, 0.25f}));
  EXPECT_EQ(float_values(g.initializers.at("W")), random_values(54, 1));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].name, "conv");
  EXPECT_EQ(g.nodes[1].name, "LeakyRelu_1");
  const Attributes& a = g.nodes[0].attrs;
  EXPECT_EQ(a.get_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(a.get_int("group", 0), 1);
  EXPECT_EQ(a.get_string("auto_pad", ""), "NOTSET");
  EXPECT_EQ(g.nodes[1].attrs.get_float("alpha", 0), static_cast<double>(0.1f));  // float32, exactly
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(g.name, "test_graph");
}

TEST(OnnxLoader, UnnamedNodesGetStableUniqueNames) {
  OnnxBuilder b;
  b.input("x", {4}).output("z");
  b.node("Relu", {"x"}, {"a"});
  b.node("Relu", {"a"}, {"b"}, "Relu_0");  // collides with the first node's generated name
  b.node("Sigmoid", {"b"}, {"z"});
  const Graph g = load_onnx(b.save("names.onnx"));
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].name, "Relu_0");
  EXPECT_EQ(g.nodes[1].name, "Relu_0_1");
  EXPECT_EQ(g.nodes[2].name, "Sigmoid_2");
  EXPECT_EQ(load_onnx(b.save("names.onnx")).nodes[1].name, "Relu_0_1");  // stable across loads
}

// x.view(x.size(0), -1) as PyTorch exports it: Shape, Gather, Unsqueeze, Concat, Reshape.
OnnxBuilder flatten_model() {
  OnnxBuilder b;
  b.input("x", {2, 3, 4, 5}).output("y");
  b.int_initializer("zero", {}, {0}).int_initializer("axes", {1}, {0}).int_initializer("minus_one", {1}, {-1});
  b.node("Shape", {"x"}, {"shape"});
  b.node("Gather", {"shape", "zero"}, {"batch"});
  b.node("Unsqueeze", {"batch", "axes"}, {"batch_1d"});
  set_attr(b.node("Concat", {"batch_1d", "minus_one"}, {"target"}), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"flat"});
  b.node("Relu", {"flat"}, {"y"});
  return b;
}

TEST(OnnxLoader, ShapeSubgraphsFoldWhenCompiled) {
  const Graph g = fold_graph(load_onnx(flatten_model().save("flatten.onnx"))).graph;
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op_type, "Reshape");
  const Tensor& target = g.initializers.at("target");
  EXPECT_EQ(std::vector<int64_t>(target.values<int64_t>().begin(), target.values<int64_t>().end()),
            (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(g.initializers.size(), 1u);  // the folded helpers' constants are gone
  const std::vector<float> x = random_values(120, 3);
  Shape shape;
  const std::vector<float> y = run_graph(g, {{"x", x}}, &shape);
  EXPECT_EQ(shape, (Shape{2, 60}));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], std::max(x[i], 0.0f));
}

TEST(OnnxLoader, DynamicDimensionsNeedAStaticShape) {
  OnnxBuilder b = flatten_model();
  b.model()
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("N");
  const std::string path = b.save("dynamic.onnx");
  EXPECT_EQ(error_of(path), path +
                                ": input 'x' has dynamic dimension 0 ('N'); give a static shape with --input_shape "
                                "x:d1,d2,...");
  // The override applies before the shape subgraph folds: the batch of 6 reaches Reshape.
  const Graph g = fold_graph(load_onnx(path, {{"x", {6, 3, 4, 5}}})).graph;
  EXPECT_EQ(g.initializers.at("target").values<int64_t>()[0], 6);
  EXPECT_THROW(load_onnx(path, {{"nope", {1}}}), UsageError);
  EXPECT_THROW(load_onnx(path, {{"x", {0, 3, 4, 5}}}), UsageError);
  // load_model dispatches .onnx here, with the same options.
  LoadOptions options;
  options.input_shapes = {{"x", {6, 3, 4, 5}}};
  EXPECT_EQ(load_model(path, options).inputs[0].shape, (Shape{6, 3, 4, 5}));
}

TEST(OnnxLoader, InputValuesBecomeConstants) {
  OnnxBuilder b;
  b.input("x", {2, 6}).input("shape", {2}, DataType::kInt64).output("y");
  b.node("Reshape", {"x", "shape"}, {"y"});
  const std::string path = b.save("reshape.onnx");
  EXPECT_EQ(error_of(path), path + ": node 'Reshape_0' (Reshape): input 1 (shape) must be a constant");
  const Graph g = load_onnx(path, {}, {{"shape", Tensor({2}, std::vector<int64_t>{3, 4})}});
  ASSERT_EQ(g.inputs.size(), 1u);
  Shape shape;
  run_graph(g, {{"x", random_values(12, 1)}}, &shape);
  EXPECT_EQ(shape, (Shape{3, 4}));
  EXPECT_THROW(load_onnx(path, {}, {{"shape", Tensor({2}, std::vector<float>{3, 4})}}), UsageError);  // not int64
}

TEST(OnnxLoader, ConstantOutputsNeedNoNodes) {
  OnnxBuilder b;
  b.input("x", {2, 3}).output("c").output("s", DataType::kInt64);
  auto& constant = b.node("Constant", {}, {"c"});
  auto* value = constant.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(2);
  value->mutable_t()->add_float_data(1.5f);
  value->mutable_t()->add_float_data(-2.0f);
  b.node("Shape", {"x"}, {"s"});  // an int64 output, known at load time
  auto model = compile(load_onnx(b.save("constant.onnx")));
  EXPECT_TRUE(model->steps().empty());  // both folded
  Session s(model);
  s.run();
  auto c = s.output("c");
  EXPECT_EQ(std::vector<float>(c.begin(), c.end()), (std::vector<float>{1.5f, -2.0f}));
  const Session::Value shape = s.value("s");
  ASSERT_EQ(shape.type.dtype, DType::kInt64);
  EXPECT_EQ(reinterpret_cast<const int64_t*>(shape.data)[1], 3);
}

// Before opset 13, Softmax flattens to 2-D at `axis` and normalises whole rows.
TEST(OnnxLoader, UpgradesOpset11SoftmaxToItsTwoDimensionalMeaning) {
  for (int opset : {11, 13}) {
    SCOPED_TRACE(opset);
    OnnxBuilder b(opset);
    b.input("x", {2, 3, 4}).output("y");
    set_attr(b.node("Softmax", {"x"}, {"y"}, "sm"), "axis", int64_t{1});
    const std::vector<float> x = random_values(24, 5, -3, 3);
    const std::vector<float> y = run_graph(load_onnx(b.save("softmax.onnx")), {{"x", x}});
    std::vector<double> want(24);
    for (int n = 0; n < 2; ++n) {
      if (opset == 11) {  // one distribution over the 12 values of each batch row
        double sum = 0;
        for (int i = 0; i < 12; ++i) sum += std::exp(double(x[n * 12 + i]));
        for (int i = 0; i < 12; ++i) want[n * 12 + i] = std::exp(double(x[n * 12 + i])) / sum;
      } else {  // one distribution per (n, w) along the 3 channels
        for (int w = 0; w < 4; ++w) {
          double sum = 0;
          for (int c = 0; c < 3; ++c) sum += std::exp(double(x[n * 12 + c * 4 + w]));
          for (int c = 0; c < 3; ++c) want[n * 12 + c * 4 + w] = std::exp(double(x[n * 12 + c * 4 + w])) / sum;
        }
      }
    }
    for (int i = 0; i < 24; ++i) ASSERT_NEAR(y[i], want[i], 1e-6) << i;
  }
}

TEST(OnnxLoader, UpgradesLegacyBroadcastingAndPerChannelPRelu) {
  OnnxBuilder b(6);
  b.input("a", {2, 3, 4}).output("y");
  b.initializer("bias", {3}, {1, 2, 3}).initializer("slope", {3}, {0.5f, 0.25f, 2});
  auto& add = b.node("Add", {"a", "bias"}, {"s"});
  set_attr(add, "broadcast", int64_t{1});
  set_attr(add, "axis", int64_t{1});       // bias runs along axis 1, not the last one
  b.node("PRelu", {"s", "slope"}, {"y"});  // opset 6: one slope per channel
  const std::vector<float> a = random_values(24, 9, -4, 2);
  const std::vector<float> y = run_graph(load_onnx(b.save("legacy.onnx")), {{"a", a}});
  const float bias[] = {1, 2, 3}, slope[] = {0.5f, 0.25f, 2};
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int w = 0; w < 4; ++w) {
        const int i = (n * 3 + c) * 4 + w;
        const float s = a[i] + bias[c];
        ASSERT_EQ(y[i], s < 0 ? slope[c] * s : s) << i;
      }
}

TEST(OnnxLoader, ShapeOpsRunOnRunTimeData) {
  OnnxBuilder b;
  b.input("x", {2, 3}).output("y");
  b.int_initializer("i", {1}, {-1});
  b.node("Gather", {"x", "i"}, {"g"});  // the last row, computed at run time
  set_attr(b.node("Cast", {"g"}, {"y"}), "to", int64_t{onnx::TensorProto::FLOAT});
  EXPECT_EQ(run_graph(load_onnx(b.save("gather.onnx")), {{"x", {1, -2, 3, 4, 5, -6}}}), (std::vector<float>{4, 5, -6}));
}

// float64 is float32 here, as the loader reads float64 constants: a Cast of float32 data
// to float64 is exact (torch.nan_to_num casts to double before IsInf), one of int64 data
// is refused, float32 rounding integers past 2^24 (16777217 would become 16777216).
TEST(OnnxLoader, CastToFloat64RunsAsFloat32WhereThatIsExact) {
  OnnxBuilder b;
  b.input("x", {2, 3}).output("y");
  set_attr(b.node("Cast", {"x"}, {"d"}), "to", int64_t{onnx::TensorProto::DOUBLE});
  b.node("Neg", {"d"}, {"n"});
  set_attr(b.node("Cast", {"n"}, {"y"}), "to", int64_t{onnx::TensorProto::FLOAT});
  EXPECT_EQ(run_graph(load_onnx(b.save("double.onnx")), {{"x", {1, -2, 3.5f, 4, 5, -6}}}),
            (std::vector<float>{-1, 2, -3.5f, -4, -5, 6}));
  OnnxBuilder ints;
  ints.input("x", {2, 3}, DataType::kInt64).output("y");
  set_attr(ints.node("Cast", {"x"}, {"y"}), "to", int64_t{onnx::TensorProto::DOUBLE});
  const std::string path = ints.save("int_double.onnx");
  try {
    compile(load_onnx(path));
    ADD_FAILURE() << "loaded";
  } catch (const UnsupportedModelError& e) {
    EXPECT_EQ(std::string(e.what()), path +
                                         ": node 'Cast_0' (Cast): casting int64 to float64 is not supported "
                                         "(computed as float32, it would round integers past 2^24)");
  }
}

TEST(OnnxLoader, RefusesWhatTheEngineLacksInOneLine) {
  struct Case {
    std::function<void(OnnxBuilder&)> build;
    std::string message;  // after "<path>: "
  };
  const std::vector<Case> cases = {
      {[](OnnxBuilder& b) { b.node("Foo", {"x"}, {"y"}); }, "node 'Foo_0' (Foo): op type 'Foo' is not supported"},
      {[](OnnxBuilder& b) { set_attr(b.node("Relu", {"x"}, {"y"}, "r"), "bogus", int64_t{1}); },
       "node 'r' (Relu): unsupported attribute 'bogus'"},
      {[](OnnxBuilder& b) { b.node("Relu", {"x"}, {"y"}).set_domain("com.microsoft"); },
       "node 'Relu_0' (Relu): domain 'com.microsoft' is not supported"},
      {[](OnnxBuilder& b) {
         auto* s = b.model().mutable_graph()->add_initializer();
         s->set_name("s");
         s->set_data_type(onnx::TensorProto::STRING);
         s->add_string_data("text");
         b.node("Add", {"x", "s"}, {"y"});
       },
       "initializer 's': data type string is not supported"},
      {[](OnnxBuilder& b) {
         auto& pool = b.node("MaxPool", {"x"}, {"y"}, "pool");
         set_attr(pool, "kernel_shape", std::vector<int64_t>{1});
         set_attr(pool, "storage_order", int64_t{1});
       },
       "node 'pool' (MaxPool): storage_order=1 is not supported"},
      {[](OnnxBuilder& b) { set_attr(b.node("Cast", {"x"}, {"y"}), "to", int64_t{onnx::TensorProto::STRING}); },
       "node 'Cast_0' (Cast): casting to string is not supported"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].message);
    OnnxBuilder b;
    b.input("x", {1, 2, 3}).output("y");
    cases[i].build(b);
    const std::string path = b.save("unsupported.onnx");
    try {
      compile(load_onnx(path));
      ADD_FAILURE() << "loaded";
    } catch (const UnsupportedModelError& e) {  // engine_check: SKIP
      EXPECT_EQ(std::string(e.what()), path + ": " + cases[i].message);
    }
  }
}

TEST(OnnxLoader, RefusesGraphInputsOfTypesTheEngineDoesNotCompute) {
  OnnxBuilder b;
  b.input("x", {2}, DataType::kDouble).output("y", DataType::kDouble);
  b.node("Relu", {"x"}, {"y"});
  const std::string path = b.save("double.onnx");
  EXPECT_EQ(error_of(path), path + ": input 'x' has type float64; the engine's inputs are float32, integers or bool");
  EXPECT_THROW(load_onnx(path), UnsupportedModelError);
}

TEST(OnnxLoader, BrokenModelsAreModelErrors) {
  OnnxBuilder b;
  b.input("x", {2}).output("y");
  b.node("Relu", {"missing"}, {"y"}, "r");
  const std::string path = b.save("dangling.onnx");
  EXPECT_EQ(error_of(path), path +
                                ": node 'r' (Relu): input 'missing' is not a graph input, an initializer or the "
                                "output of an earlier node (ONNX lists nodes in topological order)");
  OnnxBuilder c;
  c.input("x", {2}).output("nowhere");
  const std::string path2 = c.save("no_output.onnx");
  EXPECT_EQ(error_of(path2), path2 + ": graph output 'nowhere' is not produced by any node");
  OnnxBuilder d;
  d.input("x", {2, 3}).output("y");
  d.node("Gemm", {"x", "x"}, {"y"}, "g");  // inner dimensions differ
  try {
    compile(load_onnx(d.save("gemm.onnx")));
    ADD_FAILURE() << "loaded";
  } catch (const UnsupportedModelError&) {
    ADD_FAILURE() << "a malformed model is not 'unsupported'";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'g' (Gemm): inner dimensions differ"), std::string::npos) << e.what();
  }
}

// Every prefix of a valid file, and garbage, is refused with a ModelError or loads; it
// never crashes or throws anything else.
TEST(OnnxLoader, TruncatedAndCorruptFilesFailCleanly) {
  const std::string bytes = flatten_model().bytes();
  const std::string dir = temp_dir("truncated");
  int refused = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string path = dir + "/cut.onnx";
    write_file(path, bytes.substr(0, n));
    try {
      compile(load_onnx(path));
    } catch (const ModelError& e) {
      ++refused;
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
  EXPECT_GT(refused, static_cast<int>(bytes.size()) / 2);
  const std::string garbage = dir + "/garbage.onnx";
  write_file(garbage, "\x0a\xff\xff\xff\xff\x0f this is not a model");
  EXPECT_EQ(error_of(garbage),
            garbage + ": not an ONNX model (the protobuf does not parse: truncated or corrupt file?)");
  EXPECT_EQ(error_of(dir + "/absent.onnx"), dir + "/absent.onnx: cannot open the file (No such file or directory)");
}

// y = x * w, with w 3 floats in weights.bin (`bytes`) next to the model, with the given
// external_data entries besides its location; returns the model's path.
std::string external_data_model(const std::vector<std::pair<std::string, std::string>>& entries,
                                const std::string& bytes = std::string(16, '\0')) {
  OnnxBuilder b;
  b.input("x", {3}).output("y");
  auto* w = b.model().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  for (const auto& [key, value] : entries) {
    auto* e = w->add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
  b.node("Mul", {"x", "w"}, {"y"}, "mul");
  const std::string path = b.save("external.onnx");
  write_file(std::filesystem::path(path).parent_path() / "weights.bin", bytes);
  return path;
}

TEST(OnnxLoader, ReadsExternalData) {
  const float values[] = {99, 2, -3, 0.5f};  // the first float is skipped by the offset
  const std::string path =
      external_data_model({{"offset", "4"}}, std::string(reinterpret_cast<const char*>(values), sizeof values));
  EXPECT_EQ(run_graph(load_onnx(path), {{"x", {1, 1, 2}}}), (std::vector<float>{2, -3, 1}));
}

TEST(OnnxLoader, RefusesExternalDataNumbersThatAreNotOffsets) {
  const std::string prefix = ": initializer 'w': external data ";
  for (const auto& [value, cause] : std::vector<std::pair<std::string, std::string>>{
           {"xyz", "'offset' is 'xyz', not a non-negative integer"},
           {"-4", "'offset' is '-4', not a non-negative integer"},
           {"4 ", "'offset' is '4 ', not a non-negative integer"},
           {"", "'offset' is '', not a non-negative integer"},
           {"100000000000000000000000", "'offset' 100000000000000000000000 is beyond the range of 64-bit integers"},
           {"9223372036854775808", "'offset' 9223372036854775808 is beyond the range of 64-bit integers"}}) {
    const std::string path = external_data_model({{"offset", value}});
    EXPECT_EQ(error_of(path), path + prefix + cause);
  }
  const std::string path = external_data_model({{"length", "8"}});
  EXPECT_EQ(error_of(path), path + prefix + "'length' is 8 bytes, the tensor has 12");
  const std::string fine = external_data_model({{"offset", "4"}, {"length", "12"}});
  EXPECT_EQ(run_graph(load_onnx(fine), {{"x", {1, 1, 2}}}), (std::vector<float>{0, 0, 0}));
}

TEST(OnnxLoader, RefusesVersionsNewerThanItKnowsNamingBoth) {
  auto relu = [](int opset) {
    OnnxBuilder b(opset);
    b.input("x", {2}).output("y");
    b.node("Relu", {"x"}, {"y"});
    return b;
  };
  EXPECT_EQ(run_graph(load_onnx(relu(kMaxOnnxOpset).save("newest.onnx")), {{"x", {-1, 2}}}),
            (std::vector<float>{0, 2}));
  const std::string newer = relu(kMaxOnnxOpset + 1).save("newer.onnx");
  EXPECT_EQ(error_of(newer), newer +
                                 ": the model's opset 28 (of the default domain) is newer than the engine "
                                 "supports (at most 27)");
  EXPECT_THROW(load_onnx(newer), UnsupportedModelError);  // engine_check: SKIP
  // 2^32 + 13 once read as opset 13.
  OnnxBuilder wide = relu(13);
  wide.model().mutable_opset_import(0)->set_version((int64_t{1} << 32) + 13);
  const std::string wide_path = wide.save("wide.onnx");
  EXPECT_EQ(error_of(wide_path), wide_path +
                                     ": the model's opset 4294967309 (of the default domain) is newer than "
                                     "the engine supports (at most 27)");
  OnnxBuilder ir = relu(13);
  ir.model().set_ir_version(kMaxOnnxIrVersion + 1);
  const std::string ir_path = ir.save("ir.onnx");
  EXPECT_EQ(error_of(ir_path), ir_path + ": the model's IR version 14 is newer than the engine supports (at most 13)");
}

TEST(OnnxLoader, AGraphWithNoOutputsIsRefused) {
  OnnxBuilder b;
  b.input("x", {2});
  b.node("Relu", {"x"}, {"y"});
  const std::string path = b.save("no_outputs.onnx");
  try {
    compile(load_onnx(path));
    ADD_FAILURE() << "compiled";
  } catch (const ModelError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": the graph has no outputs");
  }
}

TEST(OnnxTensor, DecodesEveryNumericEncoding) {
  onnx::TensorProto half;
  half.set_data_type(onnx::TensorProto::FLOAT16);
  half.add_dims(4);
  for (int bits : {0x3C00, 0xC000, 0x7BFF, 0x0001}) half.add_int32_data(bits);
  EXPECT_EQ(float_values(tensor_from_proto(half, "")), (std::vector<float>{1.0f, -2.0f, 65504.0f, 0x1.0p-24f}));

  onnx::TensorProto bf16;
  bf16.set_data_type(onnx::TensorProto::BFLOAT16);
  bf16.add_int32_data(0x3F80);  // a scalar
  EXPECT_EQ(float_values(tensor_from_proto(bf16, "")), (std::vector<float>{1.0f}));

  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::INT32);
  raw.add_dims(2);
  const int32_t ints[] = {-7, 123456};
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(ints), sizeof ints));
  const Tensor widened = tensor_from_proto(raw, "");  // int32 becomes the engine's int64
  ASSERT_EQ(widened.dtype(), DType::kInt64);
  EXPECT_EQ(widened.values<int64_t>()[0], -7);
  EXPECT_EQ(widened.values<int64_t>()[1], 123456);

  onnx::TensorProto flags;
  flags.set_data_type(onnx::TensorProto::BOOL);
  flags.add_dims(3);
  flags.set_raw_data(std::string("\x00\x01\x02", 3));
  const Tensor b = tensor_from_proto(flags, "");
  EXPECT_EQ(std::vector<uint8_t>(b.values<uint8_t>().begin(), b.values<uint8_t>().end()),
            (std::vector<uint8_t>{0, 1, 1}));

  onnx::TensorProto wrong;
  wrong.set_data_type(onnx::TensorProto::DOUBLE);
  wrong.add_dims(2);
  wrong.add_double_data(1.0);
  EXPECT_THROW(tensor_from_proto(wrong, ""), OpError);  // one value for two elements
}

}  // namespace
}  // namespace minfer::test
