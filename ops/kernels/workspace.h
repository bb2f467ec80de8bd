// A kernel's scratch memory (its share of the session's arena), handed out in checked
// pieces: taking more than there is throws in every build, so a workspace size that
// disagrees with what a kernel uses is an error, never an overrun.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace minfer {

// Scratch that each thread of a team keeps from op to op: thread t's piece is the same
// memory in every kernel that takes one, so what a kernel writes there is already in
// that thread's caches, never in another core's. From a piece of a shared workspace
// instead, a thread's first stores went to lines another op had left in the other
// thread's cache: on a Zen 5 host whose two vCPUs share no cache, Winograd's transformed
// tiles in thread-kept scratch took ResNet-18 on two threads 1.03x faster (docs/performance.md).
class ThreadScratch {
 public:
  ThreadScratch() = default;
  // `threads` pieces of `bytes` (a multiple of 64), one after the other from `base`.
  ThreadScratch(std::byte* base, int threads, int64_t bytes) : base_(base), threads_(threads), bytes_(bytes) {}

  int threads() const { return threads_; }
  int64_t bytes() const { return bytes_; }
  // Thread t's piece as floats; throws std::logic_error naming `what` when there is no
  // such thread or its piece holds fewer than `floats`.
  std::span<float> floats(int t, int64_t floats, const char* what) const {
    if (t < 0 || t >= threads_ || floats * static_cast<int64_t>(sizeof(float)) > bytes_)
      throw std::logic_error(std::string(what) + ": thread " + std::to_string(t) + " of " + std::to_string(threads_) +
                             " needs " + std::to_string(floats) + " floats of scratch, has " +
                             std::to_string(bytes_ / static_cast<int64_t>(sizeof(float))));
    return {reinterpret_cast<float*>(base_ + t * bytes_), static_cast<size_t>(bytes_ / sizeof(float))};
  }

 private:
  std::byte* base_ = nullptr;
  int threads_ = 0;
  int64_t bytes_ = 0;
};

class Workspace {
 public:
  Workspace() = default;
  explicit Workspace(std::span<std::byte> bytes, ThreadScratch threads = {}) : bytes_(bytes), threads_(threads) {}

  int64_t bytes() const { return static_cast<int64_t>(bytes_.size()); }
  // All of it as floats (kernels that split it themselves check with require()).
  std::span<float> floats() const { return {reinterpret_cast<float*>(bytes_.data()), bytes_.size() / sizeof(float)}; }

  // Throws std::logic_error naming `what` when fewer than `needed` bytes are left.
  void require(int64_t needed, const char* what) const {
    if (needed > bytes())
      throw std::logic_error(std::string(what) + ": workspace of " + std::to_string(bytes()) + " bytes, needs " +
                             std::to_string(needed));
  }
  // The team's thread-kept scratch (KernelFacts::thread_scratch_bytes each).
  const ThreadScratch& threads() const { return threads_; }

 private:
  std::span<std::byte> bytes_;
  ThreadScratch threads_;
};

// The same check for kernels that take their scratch as a span of floats.
inline void require_workspace(std::span<const float> workspace, int64_t floats, const char* what) {
  if (floats > static_cast<int64_t>(workspace.size()))
    throw std::logic_error(std::string(what) + ": workspace of " + std::to_string(workspace.size()) +
                           " floats, needs " + std::to_string(floats));
}

// Floats rounded up to whole 64-byte cache lines. Scratch a kernel splits between
// threads (or between buffers) in pieces of such sizes starts each piece on a line of
// the 64-byte-aligned arena: a vector store that crosses a line costs two, and a
// Winograd thread whose transformed tiles sat 4 bytes past a line took 2.5x the time
// of its partner for its input transform (Zen 5, two threads).
inline int64_t whole_lines(int64_t floats) {
  return (floats + 15) / 16 * 16;
}
// The same for a size in bytes (a thread's piece of kept scratch, say).
inline int64_t whole_line_bytes(int64_t bytes) {
  return (bytes + 63) / 64 * 64;
}

}  // namespace minfer
