#pragma once
// Internal: the rules of the breaker, single-threaded. CircuitBreaker wraps it in a lock.

#include <atomic>
#include <limits>
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
  explicit LazyNow(const Clock& clock, std::optional<TimePoint> known = std::nullopt) noexcept
      : clock_(clock), t_(known) {}
  TimePoint operator()() {
    if (!t_) t_ = clock_.now();
    return *t_;
  }

 private:
  const Clock& clock_;
  std::optional<TimePoint> t_;
};

class alignas(64) StateMachine {
 public:
  // Transitions are appended to `sink` as they happen.
  StateMachine(const ValidOptions& options, RandomSource* random, TimePoint created, std::vector<Transition>& sink);

  Admission admit(LazyNow& now);
  // The one method that runs without the caller's lock. A call that arrives while OPEN, before
  // the cool-down ends, is refused on two atomic operations and a clock read the caller already
  // made; everything else (nullopt) takes the lock and admit(). Refusing here is safe because
  // only the lock holder leaves OPEN, and "before the published instant" stays true until then.
  [[nodiscard]] std::optional<Decision> refuse_without_lock(TimePoint now) noexcept {
    const auto before = refuse_before_.load(std::memory_order_acquire);
    if (before == kNoRefusal || now.time_since_epoch().count() >= before) return std::nullopt;
    lock_free_refusals_.fetch_add(1, std::memory_order_relaxed);
    return before == kRefuseForever ? Decision::RefusedForcedOpen : Decision::RefusedOpen;
  }
  [[nodiscard]] bool may_refuse_without_lock() const noexcept {
    return refuse_before_.load(std::memory_order_relaxed) != kNoRefusal;
  }
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
  void publish_refusal_window() noexcept;
  [[nodiscard]] Counters counters() const noexcept;

  static constexpr auto kNoRefusal = std::numeric_limits<Duration::rep>::min();
  static constexpr auto kRefuseForever = std::numeric_limits<Duration::rep>::max();
  [[nodiscard]] int outstanding_trials() const noexcept {
    return trials_admitted_ - trial_successes_ - trial_failures_;
  }

  // Hot fields first, so a call touches as few cache lines as it can; the configuration, read
  // but never written, after them.
  State state_ = State::Closed;
  Mode mode_ = Mode::Normal;
  bool uses_window_;  // whether any rate rule reads the window (consecutive-only ones do not)
  int consecutive_failures_ = 0;
  // Starts at 1 so that a default Ticket (generation 0) never matches.
  std::uint64_t generation_ = 1;
  Counters counters_;
  SlidingWindow window_;
  int trials_admitted_ = 0;
  int trial_successes_ = 0;
  int trial_failures_ = 0;
  int trial_slow_ = 0;
  int failed_trials_ = 0;
  TimePoint since_;
  Duration cooldown_{0};
  std::optional<TimePoint> first_trial_at_;  // when the current run of outstanding trials began

  BreakerOptions o_;
  CooldownPolicy cooldown_policy_;
  RandomSource* random_;
  std::vector<Transition>& sink_;

  // Read by every thread that calls while OPEN; kept on a line of their own.
  alignas(64) std::atomic<Duration::rep> refuse_before_{kNoRefusal};  // refused without the lock before this
  std::atomic<std::uint64_t> lock_free_refusals_{0};                   // added to counters_.not_permitted
};

}  // namespace cb
