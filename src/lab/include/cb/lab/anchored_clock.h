#pragma once
// The lab's clock: monotonic like steady_clock, on a timeline of microseconds since the Unix
// epoch ("lab time"). In one process, lab time is wall-clock time, anchored once when the clock
// is made, so `cb-lab run` stamps transitions.log with the engine's own times.
//
// Between `cb-lab step` processes lab time stands still: step N resumes it where step N-1
// stopped (resume_from), so redoing step 4 an hour after step 3 still finds the breaker OPEN,
// with the cool-down exactly where step 3 left it, and the step teaches what it is meant to.
// What is written for a person or compared with the server's record (transitions.log's stamps,
// state.json's updated_at) is wall-clock time: to_wall() adds the pause.
//
// Worked numbers: step 3 trips at 10:00:00.000 and ends at 10:00:00.050; step 4 runs at
// 10:07:00.000. Its lab time starts at 10:00:00.050 (7 min less 50 ms behind the wall), so
// the 3 s cool-down still has 2.95 s to go, and a transition at lab 10:00:03.000 is stamped
// 10:07:02.950.

#include <chrono>
#include <cstdint>

#include "cb/breaker/time.h"

namespace cb::lab {

class AnchoredClock final : public Clock {
 public:
  AnchoredClock();
  // From now on, lab time continues from `lab_time`. Call before the engine first reads the
  // clock in this process (it is not synchronised against now()).
  void resume_from(TimePoint lab_time) noexcept;
  [[nodiscard]] TimePoint now() const noexcept override;
  // The wall-clock time of a moment on this process's lab timeline.
  [[nodiscard]] TimePoint to_wall(TimePoint lab_time) const noexcept;

 private:
  std::chrono::steady_clock::time_point steady0_;
  std::int64_t lab0_us_;
  std::int64_t wall_minus_lab_us_ = 0;  // how far lab time stood still before this process
};

// 2026-01-01T10:00:03.012Z: milliseconds, UTC, as state.json's updated_at carries them.
[[nodiscard]] std::string iso8601_ms(TimePoint t);
// 2026-01-01T10:00:03.012345Z: microseconds, as transitions.log carries them (the grader places
// each stamp among the server's requests, which it stamps to the microsecond).
[[nodiscard]] std::string iso8601_us(TimePoint t);

}  // namespace cb::lab
