#pragma once
// Internal: the rules of the breaker, single-threaded. CircuitBreaker wraps it in a lock.

#include <optional>
#include <vector>

#include "cb/breaker/breaker.h"
#include "cb/breaker/window.h"

namespace cb {

// Reads the clock the first time a rule asks, then answers the same instant for the rest of
// the operation; an operation that never asks (a call let through a CLOSED count window)
// costs no clock read at all.
class LazyNow {
 public:
  explicit LazyNow(const Clock& clock) noexcept : clock_(clock) {}
  TimePoint operator()() {
    if (!t_) t_ = clock_.now();
    return *t_;
  }

 private:
  const Clock& clock_;
  std::optional<TimePoint> t_;
};

class StateMachine {
 public:
  // Transitions are appended to `sink` as they happen.
  StateMachine(const ValidOptions& options, RandomSource* random, TimePoint created, std::vector<Transition>& sink);

  Admission admit(LazyNow& now);
  RecordEffect record(const Ticket& ticket, const CallResult& result, LazyNow& now);
  void release(const Ticket& ticket);
  // Applies the time rules, for status queries.
  void observe(LazyNow& now);
  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] Status status(LazyNow& now);
  [[nodiscard]] Snapshot snapshot() const;
  [[nodiscard]] Result<void> restore(const Snapshot& s);
  // Mode::Normal is reset(): CLOSED, fresh counts.
  void set_mode(Mode mode, LazyNow& now);

  [[nodiscard]] const BreakerOptions& options() const noexcept { return o_; }

 private:
  void advance_time(LazyNow& now);
  void record_closed(bool failure, bool slow, LazyNow& now);
  void record_half_open(bool failure, bool slow, LazyNow& now);
  void trip(TimePoint at, Reason why, bool after_failed_trial);
  void begin(State to, TimePoint at, Reason why);
  void clear_counts();
  [[nodiscard]] int outstanding_trials() const noexcept {
    return trials_admitted_ - trial_successes_ - trial_failures_;
  }

  BreakerOptions o_;
  CooldownPolicy cooldown_policy_;
  RandomSource* random_;
  std::vector<Transition>& sink_;

  State state_ = State::Closed;
  Mode mode_ = Mode::Normal;
  // Starts at 1 so that a default Ticket (generation 0) never matches.
  std::uint64_t generation_ = 1;
  TimePoint since_;
  Duration cooldown_{0};
  int failed_trials_ = 0;
  int consecutive_failures_ = 0;
  SlidingWindow window_;
  int trials_admitted_ = 0;
  int trial_successes_ = 0;
  int trial_failures_ = 0;
  int trial_slow_ = 0;
  std::optional<TimePoint> first_trial_at_;  // when the current run of outstanding trials began
  Counters counters_;
};

}  // namespace cb
