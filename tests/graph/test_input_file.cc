// Reading files (graph/input_file.h): only regular files are read, so a FIFO is refused
// in one line instead of blocking forever; the files a model names stay inside its
// folder. Each loader and the image reader go through it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <thread>

#include "engine/engine.h"
#include "graph/errors.h"
#include "graph/input_file.h"
#include "graph/netjson_loader.h"
#include "graph/onnx_loader.h"
#include "tests/onnx_test_util.h"
#include "tests/temp_files.h"

namespace minfer::test {
namespace {

namespace fs = std::filesystem;

std::string make_fifo(const std::string& path) {
  EXPECT_EQ(mkfifo(path.c_str(), 0600), 0) << path;
  return path;
}

// The message of what `body` throws ("" if nothing). It must not block on `fifo`: if it
// has not returned within 10 s the test fails, and the FIFO is opened for writing and
// closed until the reader sees end of file, so the suite goes on rather than hangs.
std::string error_without_hanging(const std::string& fifo, const std::function<void()>& body) {
  std::promise<std::string> done;
  std::future<std::string> result = done.get_future();
  std::thread reader([&] {
    try {
      body();
      done.set_value("");
    } catch (const std::exception& e) {
      done.set_value(e.what());
    }
  });
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "blocked reading the FIFO " << fifo;
    while (result.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      const int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd >= 0) close(fd);
    }
  }
  reader.join();
  return result.get();
}

std::string weights_model(const std::string& weights_file) {
  return R"({"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["y"], "weights_file": ")" + weights_file +
         R"(", "initializers": {"b": {"shape": [4], "offset": 0}},
        "nodes": [{"name": "add", "op": "Add", "inputs": ["x", "b"], "outputs": ["y"]}]})";
}

std::string labels_model(const std::string& labels) {
  return R"({"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["y"], "labels": ")" + labels +
         R"(", "nodes": [{"name": "relu", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}]})";
}

// An ONNX model whose initializer 'w' lives in the external file `location`.
std::string external_data_model(const std::string& location) {
  OnnxBuilder b;
  b.input("x", {4}).output("y");
  auto* w = b.model().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = w->add_external_data();
  entry->set_key("location");
  entry->set_value(location);
  b.node("Add", {"x", "w"}, {"y"}, "add");
  return b.save("external.onnx");
}

std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(InputFile, ReadsARegularFileWholeOrAtAnOffset) {
  const std::string path = temp_dir("files") + "/data.bin";
  write_file(path, "0123456789");
  const InputFile file(path);
  EXPECT_EQ(file.size(), 10u);
  EXPECT_EQ(file.read_all(), "0123456789");
  char part[4];
  file.read_at(3, part, 4);
  EXPECT_EQ(std::string(part, 4), "3456");
  EXPECT_EQ(error_of([&] { file.read_at(8, part, 4); }), path + ": ends before byte 12");
}

TEST(InputFile, RefusesWhatIsNotARegularFile) {
  const std::string dir = temp_dir("files");
  EXPECT_EQ(error_of([&] { InputFile{dir + "/absent"}; }),
            dir + "/absent: cannot open the file (No such file or directory)");
  EXPECT_EQ(error_of([&] { InputFile{dir}; }), dir + ": is a directory, not a regular file");
  EXPECT_EQ(error_of([&] { InputFile{"/dev/null"}; }), "/dev/null: is a character device, not a regular file");
  const std::string fifo = make_fifo(dir + "/fifo");
  EXPECT_EQ(error_without_hanging(fifo, [&] { InputFile{fifo}; }), fifo + ": is a FIFO, not a regular file");
}

TEST(InputFile, ModelFilesStayInTheModelsFolder) {
  const std::string root = temp_dir("tree");
  const std::string dir = root + "/model";
  fs::create_directories(dir + "/sub");
  write_file(dir + "/w.bin", "inside");
  write_file(dir + "/sub/s.bin", "below");
  write_file(root + "/secret.bin", "outside");
  fs::create_symlink("w.bin", dir + "/link_inside");
  fs::create_symlink("../secret.bin", dir + "/link_outside");
  fs::create_symlink("..", dir + "/up");
  auto read = [&](const std::string& name) { return open_model_file(dir, name, "weights file").read_all(); };
  EXPECT_EQ(read("w.bin"), "inside");
  EXPECT_EQ(read("sub/s.bin"), "below");
  EXPECT_EQ(read("sub/../w.bin"), "inside");  // ".." that stays inside is fine
  EXPECT_EQ(read("link_inside"), "inside");
  const std::string outside = "weights file '../secret.bin': leaves the model's folder " + fs::canonical(dir).string() +
                              " (it resolves to " + fs::canonical(root + "/secret.bin").string() + ")";
  EXPECT_EQ(error_of([&] { read("../secret.bin"); }), outside);
  EXPECT_NE(error_of([&] { read("sub/../../secret.bin"); }).find("'sub/../../secret.bin': leaves the model's folder"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read("link_outside"); }).find("'link_outside': leaves the model's folder"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read("up/secret.bin"); }).find("'up/secret.bin': leaves the model's folder"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { read(root + "/secret.bin"); }),
            "weights file '" + root +
                "/secret.bin': is an absolute path; a model names its files relative to its own folder");
  EXPECT_EQ(error_of([&] { read("."); }), "weights file '.': is a directory, not a regular file");

  // A model reached through a link to its folder reads its files as usual.
  fs::create_directory_symlink(dir, root + "/alias");
  EXPECT_EQ(open_model_file(root + "/alias", "w.bin", "weights file").read_all(), "inside");
}

TEST(InputFile, ModelFilesThatAreFifosAreRefusedInOneLine) {
  const std::string dir = temp_dir("fifos");
  const std::string fifo = make_fifo(dir + "/fifo.bin");

  const std::string model = dir + "/model.json";
  write_file(model, weights_model("fifo.bin"));
  EXPECT_EQ(error_without_hanging(fifo, [&] { load_netjson(model); }),
            model + ": weights file 'fifo.bin': is a FIFO, not a regular file");

  write_file(model, labels_model("fifo.bin"));
  EXPECT_EQ(error_without_hanging(fifo, [&] { load_netjson(model); }),
            model + ": labels file 'fifo.bin': is a FIFO, not a regular file");

  const std::string onnx = external_data_model("fifo.bin");
  fs::rename(fifo, fs::path(onnx).parent_path() / "fifo.bin");
  const std::string moved = (fs::path(onnx).parent_path() / "fifo.bin").string();
  EXPECT_EQ(error_without_hanging(moved, [&] { compile(load_onnx(onnx)); }),
            onnx + ": initializer 'w': external data file 'fifo.bin': is a FIFO, not a regular file");

  for (const std::string name : {"fifo_model.onnx", "fifo_model.json"}) {
    const std::string path = make_fifo(dir + "/" + name);
    EXPECT_EQ(error_without_hanging(path, [&] { load_model(path); }), path + ": is a FIFO, not a regular file");
  }
}

TEST(InputFile, ExternalDataOutsideTheFolderIsNeverRead) {
  const std::string onnx = external_data_model("../secret.bin");
  const fs::path dir = fs::path(onnx).parent_path();
  const float values[] = {1, 2, 3, 4};
  write_file((dir.parent_path() / "secret.bin").string(),
             std::string(reinterpret_cast<const char*>(values), sizeof values));
  const std::string message = error_of([&] { compile(load_onnx(onnx)); });
  EXPECT_EQ(message.rfind(onnx + ": initializer 'w': external data file '../secret.bin': leaves the "
                                 "model's folder ",
                          0),
            0u)
      << message;
  // Inside the folder the same bytes load.
  write_file((dir / "secret.bin").string(), std::string(reinterpret_cast<const char*>(values), sizeof values));
  EXPECT_EQ(error_of([&] { compile(load_onnx(external_data_model("secret.bin"))); }), "");
}

TEST(InputFile, NetJsonOutsideTheFolderIsNeverRead) {
  const std::string dir = temp_dir("model");
  write_file(fs::path(dir).parent_path() / "w.bin", std::string(16, '\0'));
  write_file(dir + "/m.json", weights_model("../w.bin"));
  EXPECT_NE(error_of([&] {
              load_netjson(dir + "/m.json");
            }).find(dir + "/m.json: weights file '../w.bin': leaves the model's folder "),
            std::string::npos);
  write_file(dir + "/m.json", labels_model("/etc/hostname"));
  EXPECT_EQ(error_of([&] { load_netjson(dir + "/m.json"); }),
            dir +
                "/m.json: labels file '/etc/hostname': is an absolute path; a model names its files relative to its "
                "own folder");
}

}  // namespace
}  // namespace minfer::test
