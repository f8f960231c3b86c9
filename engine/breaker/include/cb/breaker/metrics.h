#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cb/breaker/state.h"
#include "cb/breaker/time.h"
#include "cb/breaker/window.h"

namespace cb {

// Since the breaker was created (a snapshot carries them across processes).
struct Counters {
  std::uint64_t permitted = 0;      // calls let through
  std::uint64_t not_permitted = 0;  // calls refused without touching the dependency
  std::uint64_t successes = 0;
  std::uint64_t failures = 0;
  std::uint64_t ignored = 0;
  std::uint64_t slow = 0;
  std::uint64_t late = 0;      // results that arrived after their state had ended
  std::uint64_t released = 0;  // permits handed back unused (cancelled calls)
  std::uint64_t transitions = 0;
  friend bool operator==(const Counters&, const Counters&) = default;
};

// Counts of the current state. CLOSED: the window and the run of failures. OPEN: the window
// that tripped it, kept for reporting only. HALF_OPEN: the trials.
struct Metrics {
  Counters counters;
  WindowTotals window;
  int consecutive_failures = 0;
  int trials_admitted = 0;
  int trial_successes = 0;
  int trial_failures = 0;
  int trial_slow = 0;
  // The rates the breaker judges on, or nullopt while too few calls are recorded to judge.
  std::optional<double> failure_rate_percent;
  std::optional<double> slow_call_rate_percent;
};

struct Status {
  State state = State::Closed;
  Mode mode = Mode::Normal;
  std::uint64_t generation = 0;
  TimePoint since{};                       // when the current state began
  Duration cooldown{0};                    // OPEN: the length of this cool-down
  std::optional<Duration> open_remaining;  // OPEN (not forced): time until HALF_OPEN
  Metrics metrics;
};

// Everything needed to continue a breaker in another process (cb-lab step N). Plain data:
// the lab serialises it; times are on the breaker's Clock timeline, so the writer converts them
// if that timeline does not survive a restart.
struct Snapshot {
  State state = State::Closed;
  Mode mode = Mode::Normal;
  std::uint64_t generation = 0;
  TimePoint since{};
  Duration cooldown{0};
  int failed_trials = 0;  // failed trials in a row, for a growing cool-down
  int consecutive_failures = 0;
  std::vector<WindowBucket> window;  // oldest first
  int trials_admitted = 0;
  int trial_successes = 0;
  int trial_failures = 0;
  int trial_slow = 0;
  Counters counters;
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

}  // namespace cb
