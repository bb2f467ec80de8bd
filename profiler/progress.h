// A one-line progress counter on stderr for long loops (many runs, big models). It is
// drawn only when stderr is a terminal and the loop has lasted half a second, so short
// runs and redirected output stay quiet.
#pragma once

#include <cstdint>
#include <string>

#include "profiler/run_profile.h"

namespace minfer {

class Progress {
 public:
  Progress(std::string label, int64_t total);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();  // clears the line it drew

  void update(int64_t done);

  // Whether stderr is a terminal: the one test for showing progress anywhere.
  static bool enabled();

 private:
  std::string label_;
  int64_t total_;
  bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_, last_draw_;
};

}  // namespace minfer
