#include "tests/temp_files.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace minfer::test {
namespace {

namespace fs = std::filesystem;

// Never destroyed: the exit handler that removes it runs after static destructors.
const fs::path& process_root() {
  static const fs::path* root = [] {
    std::string pattern = (fs::temp_directory_path() / "minfer_tests_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a folder in " + pattern);
    auto* path = new fs::path(pattern);
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(process_root(), ignored);
    });
    return path;
  }();
  return *root;
}

}  // namespace

std::string temp_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "global";
  // Parameterised names hold '/', which would nest folders: flatten it.
  std::string folder = test;
  for (char& c : folder)
    if (c == '/') c = '_';
  const fs::path dir = process_root() / folder / name;
  fs::create_directories(dir);
  return dir.string();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace minfer::test
