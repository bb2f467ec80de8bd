#include "profiler/progress.h"

#include <unistd.h>

#include <cstdio>

namespace minfer {

Progress::Progress(std::string label, int64_t total)
    : label_(std::move(label)), total_(total), enabled_(enabled()), start_(Clock::now()), last_draw_(start_) {}

Progress::~Progress() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

bool Progress::enabled() {
  return isatty(STDERR_FILENO) == 1;
}

void Progress::update(int64_t done) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  // Draw after half a second, then at most ten times a second.
  if (elapsed_ms(start_, now) < 500 || (drawn_ && elapsed_ms(last_draw_, now) < 100)) return;
  std::fprintf(stderr, "\r%s %lld/%lld", label_.c_str(), static_cast<long long>(done), static_cast<long long>(total_));
  std::fflush(stderr);
  drawn_ = true;
  last_draw_ = now;
}

}  // namespace minfer
