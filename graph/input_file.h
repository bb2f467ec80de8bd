// Every file the tools read goes through here: models, weights files, labels files,
// ONNX external data and tensor files, images, the machine cache, engine_check's
// known-failures list. Only a regular file is read: a FIFO would block the reader
// forever, a device may never end. Files a model names are also kept inside its folder.
//
// In graph/, the lowest layer, because every other one (the profiler included) reads
// files and already depends on graph/'s error types.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace minfer {

// A file that cannot be read, with the complete message: "<file>: <cause>", e.g.
// "m.json: cannot open the file (No such file or directory)" or "w.bin: is a FIFO, not a
// regular file". Callers put it in their own context (a ModelError, UsageError...).
struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A regular file open for reading. The path is checked (stat) before it is opened, so
// nothing else (a FIFO, a device, a directory) is ever opened; it is opened without
// blocking and checked again (fstat), so a file swapped in between is refused too.
class InputFile {
 public:
  // Throws FileError naming `path`.
  explicit InputFile(const std::string& path) : InputFile(path, path) {}
  // `subject` names the file in messages (see open_model_file).
  InputFile(const std::string& path, std::string subject);
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  // Bytes in the file when it was opened.
  uint64_t size() const { return size_; }
  // `bytes` bytes from `offset` into `out`; throws FileError if the file ends first (it
  // shrank since it was opened) or a read fails.
  void read_at(uint64_t offset, char* out, size_t bytes) const;
  // The whole file, as it was when opened.
  std::string read_all() const;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string subject_;
};

// A file a model names (net.json's weights_file and labels, ONNX external data's
// location), opened relative to the model's folder `dir`. Refused with a FileError,
// "<what> '<name>': <cause>", when `name` is absolute or leaves `dir` once symbolic links
// are resolved (`../x`, or a link to a file elsewhere), or is not a regular file: a model
// reads no file outside its own folder. The ONNX spec requires relative locations too.
InputFile open_model_file(const std::string& dir, const std::string& name, const std::string& what);

// A model file's bytes, refused with a ModelError ("<path>: cannot open the file (...)",
// "<path>: is a FIFO, not a regular file" or "<path>: the file is <n>: over the memory
// limit ...") before they are read when they alone pass the limit.
std::string read_file_within_limit(const std::string& path, int64_t max_memory);

}  // namespace minfer
