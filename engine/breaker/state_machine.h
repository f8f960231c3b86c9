#pragma once
// Internal: the rules of the breaker.
//
// How it is shared between threads, in one place:
// - Every rule's state (the fields marked CB_GUARDED_BY below) is read and written only under
//   the breaker's lock, `mu_`; every transition and every judgement runs under it. The compiler
//   checks this (cb/thread_safety.h, scripts/thread-safety): a method that touches those fields
//   says CB_REQUIRES(mu_).
// - The three common calls (a permit in CLOSED, its plain success, a refusal in OPEN) take the
//   `*_without_lock` paths. They carry no annotation, so the compiler proves they touch no
//   guarded field: they read the two atomics below and the configuration, which is written
//   once, before the machine is shared. Whenever they cannot be sure, they answer "take the
//   lock".
// - publish(), at the end of every locked operation (and only there), writes the two atomics
//   with release stores; the paths read them with acquire loads. So a path always acts on the
//   state some completed operation left, and is ordered just before the next one:
//   - refuse_before_: while OPEN, the instant the cool-down ends (forever when forced open). A
//     call before it is refused. Only a locked operation can leave OPEN, and until one has,
//     "before" stays true: the refusal is one the locked path would have made.
//   - closed_word_: while CLOSED in Mode::Normal, the generation, so a call is admitted with
//     nothing to reserve (a trip meanwhile makes its result late, as for any call that started
//     before a transition); 0 otherwise. Plus kQuiet when a plain success would change nothing
//     but the count of successes (quiet()): then its record needs no lock either, provided the
//     generation still matches the ticket's.
// - What the paths count goes to striped atomics (fast_counts_), added up under the lock.

#include <atomic>
#include <limits>
#include <optional>
#include <vector>

#include "cb/breaker/breaker.h"
#include "cb/breaker/window.h"
#include "cb/thread_safety.h"
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
  // `mu` is the breaker's lock, which guards this machine; transitions are appended to `sink`
  // (guarded by the same lock) as they happen.
  StateMachine(const ValidOptions& options, RandomSource* random, TimePoint created, Mutex& mu,
               std::vector<Transition>& sink);

  // The lock that guards the machine (the breaker's own, given at construction).
  [[nodiscard]] Mutex& mutex() const noexcept CB_RETURN_CAPABILITY(mu_) { return mu_; }

  Admission admit(LazyNow& now) CB_REQUIRES(mu_);
  RecordEffect record(const Ticket& ticket, const CallResult& result, LazyNow& now) CB_REQUIRES(mu_);

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
  void publish() noexcept CB_REQUIRES(mu_);

  void release(const Ticket& ticket) CB_REQUIRES(mu_);
  // Applies the time rules, for status queries.
  void observe(LazyNow& now) CB_REQUIRES(mu_);
  [[nodiscard]] State state() const noexcept CB_REQUIRES(mu_) { return state_; }
  [[nodiscard]] Status status(LazyNow& now) CB_REQUIRES(mu_);
  [[nodiscard]] Snapshot snapshot() const CB_REQUIRES(mu_);
  [[nodiscard]] Result<void> restore(const Snapshot& s, LazyNow& now) CB_REQUIRES(mu_);
  // Mode::Normal is reset(): CLOSED, fresh counts.
  void set_mode(Mode mode, LazyNow& now) CB_REQUIRES(mu_);

  // The configuration: written once, before the machine is shared, so read without the lock.
  [[nodiscard]] const BreakerOptions& options() const noexcept { return o_; }

 private:
  void advance_time(LazyNow& now) CB_REQUIRES(mu_);
  void record_closed(bool failure, bool slow, LazyNow& now) CB_REQUIRES(mu_);
  void record_half_open(bool failure, bool slow, LazyNow& now) CB_REQUIRES(mu_);
  void trip(TimePoint at, Reason why, bool after_failed_trial) CB_REQUIRES(mu_);
  void begin(State to, TimePoint at, Reason why) CB_REQUIRES(mu_);
  void clear_counts() CB_REQUIRES(mu_);
  [[nodiscard]] bool quiet() const noexcept CB_REQUIRES(mu_);
  [[nodiscard]] bool is_slow(Duration elapsed) const noexcept {
    return o_.trip.slow_call_duration > Duration::zero() && elapsed > o_.trip.slow_call_duration;
  }
  [[nodiscard]] Counters counters() const noexcept CB_REQUIRES(mu_);

  static constexpr auto kNoRefusal = std::numeric_limits<Duration::rep>::min();
  static constexpr auto kRefuseForever = std::numeric_limits<Duration::rep>::max();
  static constexpr std::uint64_t kQuiet = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kGenerationBits = kQuiet - 1;
  [[nodiscard]] int outstanding_trials() const noexcept CB_REQUIRES(mu_) {
    return trials_admitted_ - trial_successes_ - trial_failures_;
  }

  Mutex& mu_;

  // Hot fields first, so a call touches as few cache lines as it can; the configuration, read
  // but never written, after them.
  State state_ CB_GUARDED_BY(mu_) = State::Closed;
  Mode mode_ CB_GUARDED_BY(mu_) = Mode::Normal;
  const bool uses_window_;  // whether any rate rule reads the window (consecutive-only ones do not)
  int consecutive_failures_ CB_GUARDED_BY(mu_) = 0;
  // Starts at 1 so that a default Ticket (generation 0) never matches.
  std::uint64_t generation_ CB_GUARDED_BY(mu_) = 1;
  Counters counters_ CB_GUARDED_BY(mu_);
  SlidingWindow window_ CB_GUARDED_BY(mu_);
  int trials_admitted_ CB_GUARDED_BY(mu_) = 0;
  int trial_successes_ CB_GUARDED_BY(mu_) = 0;
  int trial_failures_ CB_GUARDED_BY(mu_) = 0;
  int trial_slow_ CB_GUARDED_BY(mu_) = 0;
  int failed_trials_ CB_GUARDED_BY(mu_) = 0;
  TimePoint since_ CB_GUARDED_BY(mu_);
  Duration cooldown_ CB_GUARDED_BY(mu_){0};
  // When the current run of outstanding trials began.
  std::optional<TimePoint> first_trial_at_ CB_GUARDED_BY(mu_);

  const BreakerOptions o_;
  const CooldownPolicy cooldown_policy_;
  RandomSource* const random_ CB_PT_GUARDED_BY(mu_);  // not thread-safe itself: drawn from under the lock
  std::vector<Transition>& sink_;                     // the breaker's, under the same lock

  // Read by every thread on every call; written only when a locked operation changes them, so
  // the line stays shared between the cores while nothing changes.
  alignas(64) std::atomic<std::uint64_t> closed_word_{0};  // CLOSED's generation, | kQuiet; 0: take the lock
  std::atomic<Duration::rep> refuse_before_{kNoRefusal};   // refused without the lock before this
  StripedCounters fast_counts_;                            // added to counters_
};

}  // namespace cb
