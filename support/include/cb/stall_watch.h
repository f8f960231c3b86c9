#pragma once
// Whether this process ran, all of it, through a span of time. What a grader times (a program's
// calls, its server's answers, a trace's deadline) is only evidence if the grader itself was there
// to serve and time it: a process stopped (SIGSTOP, a laptop's lid, a paused VM) or not given a
// CPU for a long while hands the program a world that stood still. A thread of the process's own
// wakes every tick; a gap between two of its wakes far beyond the tick is a stall.
//
// Why a program cannot fake one from inside its box: a sleeping thread that wakes is placed ahead
// of threads that spin (the kernel's fair scheduler), so programs busy beside the grader delay a
// wake by tenths of a second at worst, never by the threshold.

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <thread>

#include "cb/thread_safety.h"

namespace cb {

struct Stall {
  std::chrono::steady_clock::time_point from;  // the last reading before it
  std::chrono::steady_clock::duration length{};
};

// The readings, and the stalls they show, for readings from any clock (a test's too).
class StallLog {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  // A gap over `threshold` between two readings is a stall; the newest `keep` are kept.
  explicit StallLog(std::chrono::steady_clock::duration threshold, std::size_t keep = 256)
      : threshold_(threshold), keep_(keep) {}

  void reading(time_point now);
  // The longest stall that overlaps [from, to]; `now`, when given, is read first (a stall that has
  // just ended, before the next tick could see it).
  [[nodiscard]] std::optional<Stall> during(time_point from, time_point to) const;

  [[nodiscard]] std::chrono::steady_clock::duration threshold() const { return threshold_; }

 private:
  std::chrono::steady_clock::duration threshold_;
  std::size_t keep_;
  std::optional<time_point> last_;
  std::deque<Stall> stalls_;
};

// The process's watch: one thread reads the steady clock every tick, for the process's life.
class StallWatch {
 public:
  // The tick is 20 ms and a stall anything over a second: half the lab's shortest time a
  // program's answers depend on (a call's 2 s timeout), and over three times the longest wake seen
  // on a machine made as busy as a test can make it (0.3 s: five JVMs starting and two busy loops
  // on two cores).
  static constexpr std::chrono::milliseconds kTick{20};
  static constexpr std::chrono::milliseconds kThreshold{1000};

  // The one of this process, started on first use.
  static StallWatch& process();

  // Now, as since() takes it: the start of a span to ask about. The watch runs from its first use,
  // so a span must begin with this, never with a time read before.
  [[nodiscard]] static std::chrono::steady_clock::time_point mark();

  // The longest stall of this process that overlaps [from, now].
  [[nodiscard]] std::optional<Stall> since(std::chrono::steady_clock::time_point from) CB_EXCLUDES(mu_);

  StallWatch(const StallWatch&) = delete;
  StallWatch& operator=(const StallWatch&) = delete;
  ~StallWatch() = delete;  // it lives as long as the process

 private:
  StallWatch();
  void run() CB_EXCLUDES(mu_);

  Mutex mu_;
  StallLog log_ CB_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace cb
