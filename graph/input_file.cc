#include "graph/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "graph/errors.h"
#include "graph/memory_limit.h"

namespace minfer {

namespace {

// "is a FIFO, not a regular file"; empty for a regular file.
std::string not_regular(mode_t mode) {
  if (S_ISREG(mode)) return "";
  const char* kind = S_ISDIR(mode)    ? "a directory"
                     : S_ISFIFO(mode) ? "a FIFO"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "something else";
  return fmt::format("is {}, not a regular file", kind);
}

}  // namespace

InputFile::InputFile(const std::string& path, std::string subject) : subject_(std::move(subject)) {
  auto fail = [&](const std::string& cause) {
    if (fd_ >= 0) close(fd_);
    throw FileError(fmt::format("{}: {}", subject_, cause));
  };
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) fail(fmt::format("cannot open the file ({})", std::strerror(errno)));
  if (const std::string cause = not_regular(st.st_mode); !cause.empty()) fail(cause);
  // O_NONBLOCK: a FIFO swapped in since stat() opens at once instead of waiting for a
  // writer, and fstat() refuses it. On a regular file the flag changes nothing.
  fd_ = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) fail(fmt::format("cannot open the file ({})", std::strerror(errno)));
  if (fstat(fd_, &st) != 0) fail(fmt::format("cannot open the file ({})", std::strerror(errno)));
  if (const std::string cause = not_regular(st.st_mode); !cause.empty()) fail(cause);
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::InputFile(InputFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), subject_(std::move(other.subject_)) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    subject_ = std::move(other.subject_);
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0) close(fd_);
}

namespace {

// Reads until `bytes` are in or the file ends; returns how many were read.
size_t read_up_to(int fd, uint64_t offset, char* out, size_t bytes, const std::string& subject) {
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = pread(fd, out + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw FileError(fmt::format("{}: cannot read the file ({})", subject, std::strerror(errno)));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

}  // namespace

void InputFile::read_at(uint64_t offset, char* out, size_t bytes) const {
  if (read_up_to(fd_, offset, out, bytes, subject_) != bytes)
    throw FileError(fmt::format("{}: ends before byte {}", subject_, offset + bytes));
}

std::string InputFile::read_all() const {
  std::string bytes(static_cast<size_t>(size_), '\0');
  bytes.resize(read_up_to(fd_, 0, bytes.data(), bytes.size(), subject_));  // it may have shrunk since
  return bytes;
}

InputFile open_model_file(const std::string& dir, const std::string& name, const std::string& what) {
  namespace fs = std::filesystem;
  const std::string subject = fmt::format("{} '{}'", what, name);
  if (fs::path(name).is_absolute())
    throw FileError(subject + ": is an absolute path; a model names its files relative to its own folder");
  // Both sides with every symbolic link resolved, so a link inside the folder that
  // points out of it is caught like "../". The resolved path is the one opened.
  std::error_code ec;
  fs::path folder = fs::absolute(dir.empty() ? "." : dir, ec), file;
  if (!ec) folder = fs::weakly_canonical(folder, ec);
  if (!folder.has_filename()) folder = folder.parent_path();  // "/a/b/" -> "/a/b"; "/" stays
  if (!ec) file = fs::weakly_canonical(folder / name, ec);
  if (ec) throw FileError(fmt::format("{}: cannot resolve the path ({})", subject, ec.message()));
  if (std::mismatch(folder.begin(), folder.end(), file.begin(), file.end()).first != folder.end())
    throw FileError(
        fmt::format("{}: leaves the model's folder {} (it resolves to {})", subject, folder.string(), file.string()));
  return InputFile(file.string(), subject);
}

std::string read_file_within_limit(const std::string& path, int64_t max_memory) {
  try {
    const InputFile file(path);
    if (file.size() > static_cast<uint64_t>(max_memory))
      throw ModelError(fmt::format("{}: the file is {}: over the memory limit of {} (--max_memory)", path,
                                   format_bytes(static_cast<int64_t>(std::min<uint64_t>(file.size(), INT64_MAX))),
                                   format_bytes(max_memory)));
    return file.read_all();
  } catch (const FileError& e) {
    throw ModelError(e.what());
  }
}

}  // namespace minfer
