#pragma once
// Internal: the rules of the breaker. Every transition and every judgement runs under
// CircuitBreaker's lock; the common calls (a permit in CLOSED, its plain success, a refusal in
// OPEN) take the `*_without_lock` paths, which read what the last locked operation published
// (atomics) and fall back to the lock whenever they cannot be sure.

#include <atomic>
#include <limits>
#include <optional>
#include <vector>

#include "cb/breaker/breaker.h"
#include "cb/breaker/window.h"
#include "striped_counters.h"

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
  RecordEffect record(const Ticket& ticket, const CallResult& result, LazyNow& now);

  // ---- Without the caller's lock -------------------------------------------------------------
  // The three common calls, on what the last locked operation published (see publish() in
  // state_machine.cpp for why each is safe). Each answers nullopt/false when the lock is needed.
  // A call in CLOSED: nothing to reserve, so it is admitted on one atomic load.
  [[nodiscard]] std::optional<Ticket> admit_without_lock() noexcept {
    const std::uint64_t w = closed_word_.load(std::memory_order_acquire);
    if ((w & kGenerationBits) == 0) return std::nullopt;
    fast_counts_.bump(StripedCounters::Permitted);
    return Ticket{w & kGenerationBits, State::Closed};
  }
  // A plain success in a quiet CLOSED: it would change nothing but the count.
  [[nodiscard]] bool record_without_lock(const Ticket& ticket, const CallResult& result) noexcept {
    if (result.verdict != Verdict::Success || is_slow(result.elapsed)) return false;
    const std::uint64_t w = closed_word_.load(std::memory_order_acquire);
    if ((w & kQuiet) == 0 || (w & kGenerationBits) != ticket.generation) return false;
    fast_counts_.bump(StripedCounters::Successes);
    return true;
  }
  // A call in OPEN before the cool-down ends. Only the lock holder leaves OPEN, and "before the
  // published instant" stays true until it does. The coarse clock decides when it is clearly
  // before (more than `lag` early); near the end the precise clock does, and its reading is
  // handed back in `now` for the locked path to reuse.
  [[nodiscard]] std::optional<Decision> refuse_without_lock(const Clock& clock, Duration lag,
                                                            std::optional<TimePoint>& now) noexcept {
    const auto before = refuse_before_.load(std::memory_order_acquire);
    if (before == kNoRefusal) return std::nullopt;
    if (before != kRefuseForever && (clock.coarse_now() + lag).time_since_epoch().count() >= before) {
      now = clock.now();
      if (now->time_since_epoch().count() >= before) return std::nullopt;
    }
    fast_counts_.bump(StripedCounters::NotPermitted);
    return before == kRefuseForever ? Decision::RefusedForcedOpen : Decision::RefusedOpen;
  }
  // Called at the end of every locked operation: makes the paths above see its result.
  void publish() noexcept;

  void release(const Ticket& ticket);
  // Applies the time rules, for status queries.
  void observe(LazyNow& now);
  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] Status status(LazyNow& now);
  [[nodiscard]] Snapshot snapshot() const;
  [[nodiscard]] Result<void> restore(const Snapshot& s, LazyNow& now);
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
  [[nodiscard]] bool quiet() const noexcept;
  [[nodiscard]] bool is_slow(Duration elapsed) const noexcept {
    return o_.trip.slow_call_duration > Duration::zero() && elapsed > o_.trip.slow_call_duration;
  }
  [[nodiscard]] Counters counters() const noexcept;

  static constexpr auto kNoRefusal = std::numeric_limits<Duration::rep>::min();
  static constexpr auto kRefuseForever = std::numeric_limits<Duration::rep>::max();
  static constexpr std::uint64_t kQuiet = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kGenerationBits = kQuiet - 1;
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

  // Read by every thread on every call; written only when a locked operation changes them, so
  // the line stays shared between the cores while nothing changes.
  alignas(64) std::atomic<std::uint64_t> closed_word_{0};  // CLOSED's generation, | kQuiet; 0: take the lock
  std::atomic<Duration::rep> refuse_before_{kNoRefusal};   // refused without the lock before this
  StripedCounters fast_counts_;                            // added to counters_
};

}  // namespace cb
