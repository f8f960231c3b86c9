#pragma once
// cb-grade's progress on a terminal, for what takes long enough to wonder about.

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

namespace cb::grade {

// "[ 12/300] 0:45 elapsed, about 10:20 to go" (submissions of a batch, traces of --conformance),
// redrawn in place on a terminal; nothing when standard error is a file or a pipe (a CI log gets
// no carriage returns).
class ProgressLine {
 public:
  ProgressLine() : on_(::isatty(STDERR_FILENO) != 0), started_(std::chrono::steady_clock::now()) {}
  ~ProgressLine() { done(); }
  // Ends the line, so what is printed next starts on its own.
  void done() {
    if (on_ && drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void operator()(std::size_t done, std::size_t total) {
    if (!on_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const double left = done == 0 ? 0 : elapsed / static_cast<double>(done) * static_cast<double>(total - done);
    std::fprintf(stderr, "\r[%*zu/%zu] %s elapsed, about %s to go ", digits(total), done, total, clock(elapsed).c_str(),
                 clock(left).c_str());
    std::fflush(stderr);
    drawn_ = true;
  }

 private:
  static int digits(std::size_t n) { return static_cast<int>(std::to_string(n).size()); }
  static std::string clock(double seconds) {
    const long s = std::lround(seconds);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
    return buf;
  }
  bool on_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace cb::grade
