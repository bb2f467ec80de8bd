#include "graph/output_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include "graph/errors.h"

namespace minfer {

namespace fs = std::filesystem;

namespace {

// 0, or the errno of the write that failed.
int write_all(int fd, const std::string& contents) {
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// The descriptor of this process that `path` names through /proc/<pid>/fd, as
// /dev/stdout, /dev/stderr and /dev/fd/N do, or -1. Opening such a name would start a
// new file description at offset 0; writing the descriptor keeps the shell's offset and
// append mode (engine_bench --output /dev/stdout >> log).
int descriptor_named(const std::string& path) {
  const fs::path own = fs::path("/proc") / std::to_string(getpid()) / "fd";
  fs::path p = path;
  for (int hop = 0; hop < 40; ++hop) {  // as many links as the kernel follows
    std::error_code ec;
    const fs::path dir = fs::canonical(p.has_parent_path() ? p.parent_path() : fs::path("."), ec);
    if (!ec && dir == own) {
      const std::string name = p.filename().string();
      int fd = -1;
      const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), fd);
      return error == std::errc() && end == name.data() + name.size() ? fd : -1;
    }
    if (!fs::is_symlink(p, ec)) return -1;
    const fs::path next = fs::read_symlink(p, ec);
    if (ec) return -1;
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  return -1;
}

enum class How { kReplace, kInPlace, kDescriptor };

[[noreturn]] void fail(const std::string& path, const std::string& cause) {
  throw UsageError(fmt::format("{}: {}", path, cause));
}

// How `path` is written, and for kDescriptor which descriptor; a directory (or a link to
// one) is refused before anything is written.
How how_written(const std::string& path, int& descriptor) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return How::kReplace;  // created
  if (S_ISLNK(st.st_mode)) {
    if ((descriptor = descriptor_named(path)) >= 0) return How::kDescriptor;
    // Replaced, not followed: a link planted at the path redirects nothing.
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) fail(path, "is a directory");
    return How::kReplace;
  }
  if (S_ISDIR(st.st_mode)) fail(path, "is a directory");
  return S_ISREG(st.st_mode) ? How::kReplace : How::kInPlace;
}

struct Target {
  const std::string* path;
  const std::string* contents;
  How how = How::kReplace;
  int descriptor = -1;  // kDescriptor's
  std::string temp;     // kReplace's, once created
};

// A file of a fresh name beside `path`, created exclusively with the mode a new file
// gets (0666 less the umask); returns its descriptor, or -1 with errno set.
int create_temp(const std::string& path, std::string& temp) {
  thread_local std::mt19937_64 rng(std::random_device{}() ^ static_cast<uint64_t>(getpid()));
  const fs::path p(path);
  // Cut so that the name stays within NAME_MAX (255) whatever the target's length.
  const std::string base = "." + p.filename().string().substr(0, 200);
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp = (p.parent_path() / fmt::format("{}.{:016x}.tmp", base, rng())).string();
    const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

}  // namespace

void check_distinct_outputs(const std::vector<OutputPath>& outputs, const std::vector<OutputPath>& inputs) {
  auto key = [](const std::string& path) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec).lexically_normal();
    const fs::path resolved = fs::weakly_canonical(absolute, ec);
    return ec ? absolute : resolved;
  };
  auto same_file = [&](const std::string& a, const std::string& b) {
    struct stat sa {
    }, sb{};
    return key(a) == key(b) ||
           (stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
  };
  std::vector<How> how;
  for (const OutputPath& o : outputs) {
    int descriptor = -1;
    how.push_back(how_written(o.path, descriptor));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputPath& b = outputs[i];
    // Replacing a file the run reads (engine_convert m.json m.json) would lose it.
    if (how[i] == How::kReplace)
      for (const OutputPath& in : inputs)
        if (same_file(in.path, b.path))
          throw UsageError(fmt::format("{} '{}' is the {} '{}': write the output to another file", b.name, b.path,
                                       in.name, in.path));
    for (size_t j = 0; j < i; ++j) {
      // Two outputs onto one device, FIFO or descriptor (/dev/null twice) are written
      // one after the other; onto one file, the second would replace the first.
      if (how[i] != How::kReplace && how[j] != How::kReplace) continue;
      const OutputPath& a = outputs[j];
      if (same_file(a.path, b.path))
        throw UsageError(fmt::format("{} '{}' and {} '{}' are the same file: give each output its own", a.name, a.path,
                                     b.name, b.path));
    }
  }
}

void write_files(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<OutputPath> paths;
  for (const auto& [path, contents] : files) paths.push_back({"output", path});
  check_distinct_outputs(paths);

  std::vector<Target> targets;
  for (const auto& [path, contents] : files) targets.push_back({&path, &contents, How::kReplace, -1, ""});
  for (Target& t : targets) t.how = how_written(*t.path, t.descriptor);

  auto remove_temps = [&] {
    for (const Target& t : targets)
      if (!t.temp.empty()) unlink(t.temp.c_str());
  };
  auto failed = [&](const Target& t, const std::string& cause, int error) {
    remove_temps();
    fail(*t.path, fmt::format("{} ({})", cause, std::strerror(error)));
  };
  // The files that are replaced first, then those written in place (which cannot be
  // undone), then the renames: a failure before the renames leaves no file behind.
  for (Target& t : targets) {
    if (t.how != How::kReplace) continue;
    const int fd = create_temp(*t.path, t.temp);
    if (fd < 0) {
      const int error = errno;
      t.temp.clear();
      failed(t, "cannot open for writing", error);
    }
    const int error = write_all(fd, *t.contents);
    if (close(fd) != 0 && error == 0) failed(t, "cannot write", errno);
    if (error) failed(t, "cannot write", error);
  }
  for (Target& t : targets) {
    if (t.how == How::kReplace) continue;
    // Without O_CREAT or O_TRUNC: the device or FIFO stays what it is. O_NOFOLLOW: the
    // path was no link when it was looked at, and a link swapped in is not followed.
    const int fd =
        t.how == How::kDescriptor ? t.descriptor : open(t.path->c_str(), O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) failed(t, "cannot open for writing", errno);
    int error = write_all(fd, *t.contents);
    if (t.how == How::kInPlace && close(fd) != 0 && error == 0) error = errno;
    if (error) failed(t, "cannot write", error);
  }
  for (Target& t : targets) {
    if (t.how != How::kReplace) continue;
    if (rename(t.temp.c_str(), t.path->c_str()) != 0) failed(t, "cannot replace the file", errno);
    t.temp.clear();
  }
}

void write_stdout(const std::string& text) {
  std::cout.flush();  // what went before, in order
  std::fflush(stdout);
  if (const int error = write_all(STDOUT_FILENO, text))
    throw UsageError(fmt::format("stdout: cannot write ({})", std::strerror(error)));
}

}  // namespace minfer
