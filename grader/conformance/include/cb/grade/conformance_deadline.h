#pragma once
// The times a conformance part may take, as decisions a regrade makes again the same way.
//
// A part asks whether a time has passed only at points it reaches in the same order whenever it
// is given the same answers: between rounds of traces, and before each run it makes beyond them
// (a trace again alone, an experiment, a shrinking step). Live, the clock answers, and the first
// "passed" is kept as the number of that asking. A regrade answers from the kept log in no time
// at all; it is told "passed" from that same asking on, so it stops where the live run stopped
// and asks the log for nothing the live run never asked.

#include <chrono>
#include <functional>

namespace cb::grade::conformance {

using TimeSource = std::function<std::chrono::steady_clock::time_point()>;

class Deadline {
 public:
  // Passes when `now()` reaches `start + after`.
  static Deadline live(TimeSource now, std::chrono::steady_clock::time_point start, std::chrono::milliseconds after);
  // Passes from asking number `cut` on (-1: never).
  static Deadline replay(int cut);
  static Deadline never() { return replay(-1); }

  // Once passed, passed for good.
  [[nodiscard]] bool passed();
  // The asking it first passed at; -1: not yet.
  [[nodiscard]] int cut() const noexcept { return cut_; }

 private:
  Deadline() = default;
  TimeSource now_;  // empty: a replay
  std::chrono::steady_clock::time_point at_{};
  bool never_ = true;
  int asked_ = 0;
  int cut_ = -1;
};

}  // namespace cb::grade::conformance
