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

class Workspace {
 public:
  Workspace() = default;
  explicit Workspace(std::span<std::byte> bytes) : bytes_(bytes) {}

  int64_t bytes() const { return static_cast<int64_t>(bytes_.size()); }
  // All of it as floats (kernels that split it themselves check with require()).
  std::span<float> floats() const { return {reinterpret_cast<float*>(bytes_.data()), bytes_.size() / sizeof(float)}; }

  // Throws std::logic_error naming `what` when fewer than `needed` bytes are left.
  void require(int64_t needed, const char* what) const {
    if (needed > bytes())
      throw std::logic_error(std::string(what) + ": workspace of " + std::to_string(bytes()) + " bytes, needs " +
                             std::to_string(needed));
  }

 private:
  std::span<std::byte> bytes_;
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

}  // namespace minfer
