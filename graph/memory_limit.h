// The memory limit (--max_memory): the most bytes of tensor data one model may make the
// process allocate. Loaders count constant data against it before allocating it, the
// ONNX constant folder counts what it builds, and compile() checks every tensor and the
// activation arena before any session allocates it: a hostile file is refused with a
// one-line error instead of exhausting memory.
#pragma once

#include <cstdint>
#include <string>

namespace minfer {

// Half the physical memory: room for the model and for everything else on the machine.
int64_t default_max_memory();

// "4096", "512K", "64M", "2G", "1T" (binary multiples: K = 1024); throws UsageError
// naming `flag` for anything else, zero, or a value that overflows.
int64_t parse_byte_size(const std::string& flag, const std::string& text);

// "100 bytes", "1.5 KiB", "256 MiB", "11.5 GiB": for messages.
std::string format_bytes(int64_t bytes);

// Bytes of a tensor of `elements` elements (float32 by default); INT64_MAX when they do
// not fit in int64 (over any memory limit).
int64_t tensor_bytes(int64_t elements, int64_t bytes_per_element = 4);

// A running count of bytes against the limit.
class MemoryBudget {
 public:
  explicit MemoryBudget(int64_t limit = default_max_memory()) : limit_(limit) {}

  // Counts `bytes` for `what`, before the caller allocates them; throws OpError
  // "<what> needs <n>, over the memory limit of <limit> (--max_memory)" when the
  // total would pass the limit.
  void reserve(int64_t bytes, const std::string& what);
  // Checks a transient allocation of `bytes` (freed before the next reserve) on top
  // of what is counted, without counting it.
  void check(int64_t bytes, const std::string& what) const;

  int64_t limit() const { return limit_; }
  int64_t used() const { return used_; }

 private:
  int64_t limit_;
  int64_t used_ = 0;
};

}  // namespace minfer
