#include "graph/memory_limit.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <stdexcept>

#include "graph/errors.h"

namespace minfer {

int64_t default_max_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return int64_t{4} << 30;  // unknown: a few GiB
  return static_cast<int64_t>(pages) / 2 * page_size;
}

int64_t parse_byte_size(const std::string& flag, const std::string& text) {
  auto bad = [&] {
    return UsageError(
        fmt::format("{} '{}': expected a positive number of bytes with an optional K, M, G or T suffix", flag, text));
  };
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || text.size() > digits + 1) throw bad();
  int shift = 0;
  if (digits < text.size()) {
    switch (std::toupper(static_cast<unsigned char>(text[digits]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: throw bad();
    }
  }
  int64_t value = 0;
  for (size_t i = 0; i < digits; ++i)
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, text[i] - '0', &value)) throw bad();
  if (value == 0 || value > (INT64_MAX >> shift)) throw bad();
  return value << shift;
}

std::string format_bytes(int64_t bytes) {
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  if (value == static_cast<double>(static_cast<int64_t>(value))) return fmt::format("{:.0f} {}", value, units[unit]);
  return fmt::format("{:.1f} {}", value, units[unit]);
}

int64_t tensor_bytes(int64_t elements, int64_t bytes_per_element) {
  int64_t bytes = 0;
  // More bytes than int64 holds is more than any limit: saturate, so the budget refuses
  // it with its one-line message instead of an exception nobody names the tensor for.
  if (__builtin_mul_overflow(elements, bytes_per_element, &bytes)) return INT64_MAX;
  return bytes;
}

void MemoryBudget::check(int64_t bytes, const std::string& what) const {
  int64_t total = 0;
  if (bytes <= limit_ && !__builtin_add_overflow(used_, bytes, &total) && total <= limit_) return;
  const std::string in_use = used_ > 0 ? fmt::format(", with {} already in use", format_bytes(used_)) : "";
  throw OpError(fmt::format("{} needs {}{}: over the memory limit of {} (--max_memory)", what, format_bytes(bytes),
                            in_use, format_bytes(limit_)));
}

void MemoryBudget::reserve(int64_t bytes, const std::string& what) {
  check(bytes, what);
  used_ += bytes;
}

}  // namespace minfer
