// Writing files (graph/output_files.h): through a fresh temporary file and a rename,
// never following a link at a temporary name; devices and FIFOs written in place, never
// replaced; all of a group or none; one file never given twice.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "graph/errors.h"
#include "graph/output_files.h"
#include "tests/onnx_test_util.h"
#include "tests/temp_files.h"

namespace minfer::test {
namespace {

namespace fs = std::filesystem;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// Every name in `dir`: a failed write leaves no temporary file behind.
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool writable(const char* path) {
  return access(path, W_OK) == 0;
}

TEST(OutputFiles, CreatesAFileWithTheModeANewFileGets) {
  const std::string dir = temp_dir("out");
  for (const mode_t mask : {mode_t{022}, mode_t{077}}) {
    const mode_t previous = umask(mask);
    const std::string path = dir + "/r" + std::to_string(mask) + ".json";
    write_files({{path, "report"}});
    umask(previous);
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask) << "umask " << mask;
    EXPECT_EQ(read(path), "report");
  }
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"r18.json", "r63.json"}));
}

TEST(OutputFiles, ALinkAtATemporaryNameOrAtThePathRedirectsNothing) {
  const std::string dir = temp_dir("out");
  const std::string victim = dir + "/victim.txt";
  write_file(victim, "precious");
  // A stale or planted link where a fixed temporary name would be.
  fs::create_symlink(victim, dir + "/r.json.tmp");
  write_files({{dir + "/r.json", "report"}});
  EXPECT_EQ(read(dir + "/r.json"), "report");
  EXPECT_EQ(read(victim), "precious");
  EXPECT_TRUE(fs::is_symlink(dir + "/r.json.tmp"));
  // A link at the path itself is replaced by the file, not followed.
  fs::create_symlink(victim, dir + "/link.json");
  write_files({{dir + "/link.json", "report"}});
  EXPECT_FALSE(fs::is_symlink(dir + "/link.json"));
  EXPECT_EQ(read(dir + "/link.json"), "report");
  EXPECT_EQ(read(victim), "precious");
}

TEST(OutputFiles, DevicesAreWrittenInPlaceNotReplaced) {
  struct stat before {
  }, after{};
  ASSERT_EQ(stat("/dev/null", &before), 0);
  write_files({{"/dev/null", "report"}});  // as root, a rename would have replaced the device
  ASSERT_EQ(stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_rdev, before.st_rdev);
  EXPECT_EQ(after.st_ino, before.st_ino);
  // One device given twice is written twice: nothing is replaced.
  write_files({{"/dev/null", "a"}, {"/dev/null", "b"}});
}

TEST(OutputFiles, AFifoIsWrittenInPlace) {
  const std::string fifo = temp_dir("out") + "/pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // The reading end, open before the write (without waiting for a writer): what is
  // written fits the pipe's buffer, so nothing here can block.
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  write_files({{fifo, "through the pipe"}});
  char buffer[64];
  const ssize_t n = ::read(reader, buffer, sizeof buffer);
  close(reader);
  EXPECT_EQ(std::string(buffer, static_cast<size_t>(std::max<ssize_t>(n, 0))), "through the pipe");
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(OutputFiles, AFullDeviceIsOneErrorAndTheGroupIsNotLeft) {
  if (!writable("/dev/full")) GTEST_SKIP() << "no writable /dev/full";
  const std::string dir = temp_dir("out");
  write_file(dir + "/old.txt", "previous run");
  EXPECT_EQ(error_of([&] {
              write_files({{dir + "/old.txt", "new"}, {"/dev/full", "trace"}, {dir + "/r.html", "page"}});
            }),
            "/dev/full: cannot write (No space left on device)");
  EXPECT_EQ(read(dir + "/old.txt"), "previous run");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"old.txt"});
}

TEST(OutputFiles, AFailedGroupLeavesNoneAndKeepsWhatWasThere) {
  const std::string dir = temp_dir("out");
  write_file(dir + "/old.txt", "previous run");
  fs::create_directory(dir + "/taken");
  EXPECT_EQ(error_of([&] {
              write_files({{dir + "/old.txt", "new"}, {dir + "/missing/r.json", "report"}});
            }),
            dir + "/missing/r.json: cannot open for writing (No such file or directory)");
  EXPECT_EQ(error_of([&] {
              write_files({{dir + "/new.txt", "new"}, {dir + "/taken", "report"}});
            }),
            dir + "/taken: is a directory");
  EXPECT_EQ(read(dir + "/old.txt"), "previous run");
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"old.txt", "taken"}));
}

TEST(OutputFiles, OneFileGivenTwiceIsRefusedBeforeAnythingIsWritten) {
  const std::string dir = temp_dir("out");
  const std::string x = dir + "/x";
  EXPECT_EQ(error_of([&] {
              check_distinct_outputs({{"--output", x}, {"--trace", dir + "/./x"}});
            }),
            "--output '" + x + "' and --trace '" + dir + "/./x' are the same file: give each output its own");
  EXPECT_NE(error_of([&] { check_distinct_outputs({{"--output", x}, {"--html", dir + "/sub/../x"}}); }), "");
  EXPECT_NE(error_of([&] { write_files({{x, "a"}, {dir + "//x", "b"}}); }), "");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{}) << "nothing is written";
  // One existing file under two names: a hard link, a link to the folder.
  write_file(x, "old");
  fs::create_hard_link(x, dir + "/hard");
  fs::create_directory_symlink(dir, dir + "/alias");
  EXPECT_NE(error_of([&] { check_distinct_outputs({{"--output", x}, {"--trace", dir + "/hard"}}); }), "");
  EXPECT_NE(error_of([&] { check_distinct_outputs({{"--output", x}, {"--trace", dir + "/alias/x"}}); }), "");
  EXPECT_EQ(error_of([&] { check_distinct_outputs({{"--output", x}, {"--trace", dir + "/y"}}); }), "");
  // A descriptor open on the file (as stdout redirected to it), in either order.
  const int fd = open(x.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string descriptor = "/dev/fd/" + std::to_string(fd);
  EXPECT_NE(error_of([&] { check_distinct_outputs({{"--output", x}, {"--trace", descriptor}}); }), "");
  EXPECT_NE(error_of([&] { check_distinct_outputs({{"--output", descriptor}, {"--trace", x}}); }), "");
  close(fd);
}

TEST(OutputFiles, ConcurrentWritersOntoOnePathEachReplaceItWhole) {
  const std::string path = temp_dir("out") + "/r.json";
  constexpr int kWriters = 4, kWrites = 25;
  std::vector<std::string> contents;
  for (int w = 0; w < kWriters; ++w) contents.push_back(std::string(1 << 16, static_cast<char>('a' + w)));
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < kWrites; ++i) {
        try {
          write_files({{path, contents[w]}});
        } catch (const std::exception&) {
          ++failures;
        }
        const std::string now = read(path);
        if (std::find(contents.begin(), contents.end(), now) == contents.end()) ++failures;  // mixed or partial
      }
    });
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(names_in(fs::path(path).parent_path()), std::vector<std::string>{"r.json"});
}

}  // namespace
}  // namespace minfer::test
