// Every rule of the breaker is in this file. The traps each rule avoids are named where the
// rule is, and each has its own test in tests/breaker/.
#include "state_machine.h"

#include <algorithm>
#include <limits>
#include <string>

#include "cb/breaker/cooldown.h"

namespace cb {
namespace {

// The rate rules compare with >=, in exact arithmetic: 3 failures of 6 calls against 50% is
// 300 >= 300, which trips (the lab's step 3). Both products are integers well inside a double's
// 53-bit mantissa, so there is no rounding to make 50% read as 49.999%.
bool reaches(std::uint32_t count, std::uint32_t calls, double percent) {
  return static_cast<double>(count) * 100.0 >= percent * static_cast<double>(calls);
}

std::optional<double> judged_rate(std::uint32_t count, std::uint32_t calls, int minimum) {
  if (calls == 0 || calls < static_cast<std::uint32_t>(minimum)) return std::nullopt;
  return 100.0 * static_cast<double>(count) / static_cast<double>(calls);
}

}  // namespace

StateMachine::StateMachine(const ValidOptions& options, RandomSource* random, TimePoint created, Mutex& mu,
                           std::vector<Transition>& sink)
    : mu_(mu),
      uses_window_(options->trip.failure_rate_percent.has_value() || options->trip.slow_call_rate_percent.has_value()),
      window_(options->trip.window),
      since_(created),
      o_(options.get()),
      cooldown_policy_(o_.cooldown),
      random_(random),
      sink_(sink) {
  // Nobody else can hold the lock yet; taking it lets the compiler check publish() as everywhere.
  MutexLock lock(mu_);
  publish();
}

// ---- Time ------------------------------------------------------------------------------------
// Nobody runs a timer. An OPEN breaker is HALF_OPEN from the instant now - opened_at >= cooldown
// (>=: at exactly opened_at + cooldown it already is), and whoever asks next, a call or a status
// query, makes that true. The transition is stamped with the instant the cool-down ended.
void StateMachine::advance_time(LazyNow& now) {
  if (mode_ != Mode::Normal) return;
  for (;;) {
    if (state_ == State::Open) {
      if (now() - since_ < cooldown_) return;
      begin(State::HalfOpen, since_ + cooldown_, Reason::CooldownElapsed);
      return;  // a fresh HALF_OPEN has no trials out, so no max-wait can be due
    }
    if (state_ == State::HalfOpen && o_.half_open.max_wait > Duration::zero() && outstanding_trials() > 0) {
      // A trial that never reports must not pin the breaker here: past max_wait it counts as
      // a failed trial. The new cool-down may itself have ended by now, hence the loop.
      const TimePoint deadline = *first_trial_at_ + o_.half_open.max_wait;
      if (now() < deadline) return;
      trip(deadline, Reason::HalfOpenTimeout, /*after_failed_trial=*/true);
      continue;
    }
    return;
  }
}

void StateMachine::observe(LazyNow& now) { advance_time(now); }

// ---- Admission -------------------------------------------------------------------------------
// Deciding and reserving happen in this one function, under the caller's one lock: checking the
// state in one critical section and taking the slot in another would let every thread that saw
// "HALF_OPEN, a slot free" through at once.
Admission StateMachine::admit(LazyNow& now) {
  switch (mode_) {
    case Mode::ForcedOpen: ++counters_.not_permitted; return {Decision::RefusedForcedOpen, {kRefused, state_}};
    case Mode::ForcedClosed:
    case Mode::Disabled: ++counters_.permitted; return {Decision::Permitted, {generation_, State::Closed}};
    case Mode::Normal: break;
  }
  advance_time(now);
  switch (state_) {
    case State::Closed: ++counters_.permitted; return {Decision::Permitted, {generation_, State::Closed}};
    case State::Open:
      // Refused at once: it never reaches the dependency and counts as neither success nor
      // failure, only as not permitted.
      ++counters_.not_permitted;
      return {Decision::RefusedOpen, {kRefused, State::Open}};
    case State::HalfOpen: {
      const int permitted = o_.half_open.permitted_calls;  // 0: every call is a trial
      if (permitted > 0 && trials_admitted_ >= permitted) {
        ++counters_.not_permitted;
        return {Decision::RefusedHalfOpenFull, {kRefused, State::HalfOpen}};
      }
      if (o_.half_open.max_wait > Duration::zero() && outstanding_trials() == 0) first_trial_at_ = now();
      ++trials_admitted_;
      ++counters_.permitted;
      return {Decision::Permitted, {generation_, State::HalfOpen}};
    }
  }
  return {Decision::RefusedOpen, {kRefused, state_}};
}

// ---- Outcomes --------------------------------------------------------------------------------
RecordEffect StateMachine::record(const Ticket& ticket, const CallResult& result, LazyNow& now) {
  // A refused call never ran: there is nothing to count, in any state. (Before every refusal
  // carried this mark, a refusal in a full HALF_OPEN held the live generation, and recording it
  // counted as one more trial.)
  if (ticket.generation == kRefused) {
    return RecordEffect::Refused;
  }
  // A call that started before a transition reports into a state that has ended. Counting it
  // would carry an old failure into a fresh CLOSED, or a pre-trip success into HALF_OPEN.
  if (ticket.generation != generation_) {
    ++counters_.late;
    return RecordEffect::Late;
  }
  if (mode_ == Mode::Disabled) return RecordEffect::NotRecorded;
  if (result.verdict == Verdict::Ignored) {
    // Neither success nor failure (a 4xx is the caller's mistake, not the dependency's), and a
    // trial that told us nothing gives its slot to the next call.
    ++counters_.ignored;
    if (state_ == State::HalfOpen) --trials_admitted_;
    return RecordEffect::Ignored;
  }
  const bool failure = result.verdict == Verdict::Failure;
  const bool slow = is_slow(result.elapsed);
  ++(failure ? counters_.failures : counters_.successes);
  if (slow) ++counters_.slow;
  if (state_ == State::Closed) {
    record_closed(failure, slow, now);
  } else if (state_ == State::HalfOpen) {
    record_half_open(failure, slow, now);
  }
  // OPEN issues no tickets, and entering it changes the generation, so nothing reaches here
  // in OPEN.
  return RecordEffect::Counted;
}

void StateMachine::release(const Ticket& ticket) {
  if (ticket.generation == kRefused || ticket.generation != generation_) return;
  ++counters_.released;
  if (state_ == State::HalfOpen && ticket.admitted_in == State::HalfOpen) --trials_admitted_;
}

void StateMachine::record_closed(bool failure, bool slow, LazyNow& now) {
  // Consecutive, not total: one success breaks the run (the balancer exercise's first common mistake).
  consecutive_failures_ = failure ? consecutive_failures_ + 1 : 0;
  if (uses_window_) window_.record(failure, slow, window_.uses_time() ? now() : TimePoint{});
  if (mode_ == Mode::ForcedClosed) return;  // metrics only

  const TripOptions& t = o_.trip;
  if (failure && t.consecutive_failures > 0 && consecutive_failures_ >= t.consecutive_failures) {
    trip(now(), Reason::ConsecutiveFailures, false);
    return;
  }
  // Never judged below the minimum: with 5 as minimum, 1 failure in 1 call is not a 100% rate.
  // Judged after every call, successes included, because a time window can lose old successes
  // and rise without a new failure. The lab's numbers (window 10, minimum 5, 50%): after 3
  // successes, failure 1 is 1/4 (not judged), failure 2 is 2/5 = 40%, failure 3 is 3/6 = 50%
  // and trips.
  const WindowTotals& w = window_.totals();
  if (w.calls < static_cast<std::uint32_t>(t.window.minimum_calls)) return;
  if (t.failure_rate_percent && reaches(w.failures, w.calls, *t.failure_rate_percent)) {
    trip(now(), Reason::FailureRate, false);
  } else if (t.slow_call_rate_percent && reaches(w.slow, w.calls, *t.slow_call_rate_percent)) {
    trip(now(), Reason::SlowCallRate, false);
  }
}

void StateMachine::record_half_open(bool failure, bool slow, LazyNow& now) {
  ++(failure ? trial_failures_ : trial_successes_);
  if (slow) ++trial_slow_;
  const HalfOpenOptions& h = o_.half_open;
  if (h.decide == HalfOpenOptions::Decide::EachOutcome) {
    // One failed trial reopens, and the cool-down restarts from the trial's own time: reusing
    // the old opened_at would make the breaker half-open again at once (the balancer exercise's third mistake).
    if (failure) {
      trip(now(), Reason::TrialFailed, true);
    } else if (trial_successes_ >= h.successes_to_close) {
      begin(State::Closed, now(), Reason::TrialsSucceeded);
    }
    return;
  }
  // All trials judged together (the lab's rule): with 3 trials and 50%, 1 failure of 3 (33%) closes,
  // 2 of 3 (67%) reopen. One trial alone would let a dependency that fails half its calls flap.
  const auto decided = static_cast<std::uint32_t>(trial_successes_ + trial_failures_);
  if (decided < static_cast<std::uint32_t>(h.permitted_calls)) return;
  const TripOptions& t = o_.trip;
  if (t.failure_rate_percent &&
      reaches(static_cast<std::uint32_t>(trial_failures_), decided, *t.failure_rate_percent)) {
    trip(now(), Reason::TrialFailureRate, true);
  } else if (t.slow_call_rate_percent &&
             reaches(static_cast<std::uint32_t>(trial_slow_), decided, *t.slow_call_rate_percent)) {
    trip(now(), Reason::TrialSlowCallRate, true);
  } else {
    begin(State::Closed, now(), Reason::TrialsSucceeded);
  }
}

// ---- Transitions -----------------------------------------------------------------------------
void StateMachine::trip(TimePoint at, Reason why, bool after_failed_trial) {
  // The cool-down grows only over failed trials in a row; a trip out of CLOSED starts at base.
  failed_trials_ = after_failed_trial ? failed_trials_ + 1 : 0;
  const double unit = cooldown_policy_.needs_random() ? random_->next_unit() : 0.0;
  cooldown_ = cooldown_policy_.duration(failed_trials_, unit);
  begin(State::Open, at, why);
}

// Every state starts with fresh counts: no failures carried into CLOSED, no successes into
// HALF_OPEN, and a new generation so that results from the old state arrive late.
// OPEN keeps the window that tripped it, for reporting only; nothing is recorded in OPEN.
void StateMachine::begin(State to, TimePoint at, Reason why) {
  const Transition t{state_, to, at, why, ++generation_};
  if (to != State::Open) clear_counts();
  if (to == State::Closed) failed_trials_ = 0;
  state_ = to;
  since_ = at;
  if (t.from != t.to) {
    ++counters_.transitions;
    sink_.push_back(t);
  }
}

// ---- What the lock-free paths read ----------------------------------------------------------
// What the two atomics mean, and why acting on them is safe, is at the top of state_machine.h.
// Stores happen only on change: a store to a line every thread reads would evict it from
// their caches even when the value is the same.
void StateMachine::publish() noexcept {
  Duration::rep before = kNoRefusal;
  if (state_ == State::Open)
    before = mode_ == Mode::ForcedOpen ? kRefuseForever : (since_ + cooldown_).time_since_epoch().count();
  if (refuse_before_.load(std::memory_order_relaxed) != before) refuse_before_.store(before, std::memory_order_release);
  std::uint64_t word = 0;
  if (state_ == State::Closed && mode_ == Mode::Normal) word = generation_ | (quiet() ? kQuiet : 0);
  if (closed_word_.load(std::memory_order_relaxed) != word) closed_word_.store(word, std::memory_order_release);
}

// A success changes the run of failures (unless there is none) and the window (unless nobody
// reads it, or it is a count window already full of plain successes: the new one pushes out an
// old one just like it, and the ring looks the same). With no failures and no slow calls no
// rate can reach a threshold, all of which are > 0%. A time window is never quiet: a success
// lands in the current second's bucket. The lab's window (10 calls) is quiet after ten
// successes in a row; the balancer's consecutive rule after any success.
bool StateMachine::quiet() const noexcept {
  if (consecutive_failures_ != 0) return false;
  if (!uses_window_) return true;
  const WindowTotals& w = window_.totals();
  return !window_.uses_time() && w.calls == static_cast<std::uint32_t>(o_.trip.window.size) && w.failures == 0 &&
         w.slow == 0;
}

Counters StateMachine::counters() const noexcept {
  Counters c = counters_;
  c.permitted += fast_counts_.sum(StripedCounters::Permitted);
  c.successes += fast_counts_.sum(StripedCounters::Successes);
  c.not_permitted += fast_counts_.sum(StripedCounters::NotPermitted);
  return c;
}

void StateMachine::clear_counts() {
  window_.clear();
  consecutive_failures_ = 0;
  trials_admitted_ = trial_successes_ = trial_failures_ = trial_slow_ = 0;
  first_trial_at_.reset();
}

void StateMachine::set_mode(Mode mode, LazyNow& now) {
  mode_ = mode;
  switch (mode) {
    case Mode::ForcedOpen:
      cooldown_ = Duration::zero();
      begin(State::Open, now(), Reason::ForcedOpen);
      break;
    case Mode::ForcedClosed: begin(State::Closed, now(), Reason::ForcedClosed); break;
    case Mode::Disabled: begin(State::Closed, now(), Reason::Disabled); break;
    case Mode::Normal: begin(State::Closed, now(), Reason::Reset); break;
  }
}

// ---- Reporting -------------------------------------------------------------------------------
Status StateMachine::status(LazyNow& now) {
  advance_time(now);
  if (state_ == State::Closed) window_.expire(now());
  Status s;
  s.state = state_;
  s.mode = mode_;
  s.generation = generation_;
  s.since = since_;
  s.cooldown = cooldown_;
  if (state_ == State::Open && mode_ == Mode::Normal) s.open_remaining = since_ + cooldown_ - now();
  Metrics& m = s.metrics;
  m.counters = counters();
  m.window = window_.totals();
  m.consecutive_failures = consecutive_failures_;
  m.trials_admitted = trials_admitted_;
  m.trial_successes = trial_successes_;
  m.trial_failures = trial_failures_;
  m.trial_slow = trial_slow_;
  if (state_ != State::HalfOpen) {
    m.failure_rate_percent = judged_rate(m.window.failures, m.window.calls, o_.trip.window.minimum_calls);
    m.slow_call_rate_percent = judged_rate(m.window.slow, m.window.calls, o_.trip.window.minimum_calls);
  }
  return s;
}

Snapshot StateMachine::snapshot() const {
  Snapshot s;
  s.state = state_;
  s.mode = mode_;
  s.generation = generation_;
  s.since = since_;
  s.cooldown = cooldown_;
  s.failed_trials = failed_trials_;
  s.consecutive_failures = consecutive_failures_;
  s.window = window_.buckets();
  s.trials_admitted = trials_admitted_;
  s.trial_successes = trial_successes_;
  s.trial_failures = trial_failures_;
  s.trial_slow = trial_slow_;
  s.counters = counters();
  return s;
}

Result<void> StateMachine::restore(const Snapshot& s, LazyNow& now) {
  auto bad = [](const std::string& field, const std::string& why) { return Error{"snapshot." + field + ": " + why}; };
  // A snapshot from a file may have been edited or damaged: one this breaker could never have
  // taken would be waited out as it says (a cool-down of 2^63-1 us: "OPEN for 292471 years").
  const Duration longest = CooldownPolicy(o_.cooldown).duration(std::numeric_limits<int>::max(), 1.0);
  if (s.cooldown > longest)
    return bad("cooldown", std::to_string(s.cooldown.count()) + " us is longer than this breaker's policy gives (" +
                               std::to_string(longest.count()) + " us at most)");
  if (s.since > now())
    return bad("since", "the state was entered " + std::to_string((s.since - now()).count()) +
                            " us after now; a snapshot is of the past");
  if (s.mode == Mode::ForcedOpen && s.state != State::Open) return bad("state", "a forced-open breaker is OPEN");
  if ((s.mode == Mode::ForcedClosed || s.mode == Mode::Disabled) && s.state != State::Closed)
    return bad("state", "a forced-closed or disabled breaker is CLOSED");
  // The lock-free paths carry the generation in 63 bits (publish()).
  if (s.generation >= kQuiet) return bad("generation", "must be below 2^63");
  if (s.cooldown < Duration::zero()) return bad("cooldown", "must be >= 0");
  if (s.failed_trials < 0) return bad("failed_trials", "must be >= 0");
  if (s.consecutive_failures < 0) return bad("consecutive_failures", "must be >= 0");
  if (s.trial_successes < 0 || s.trial_failures < 0 || s.trial_slow < 0 || s.trials_admitted < 0)
    return bad("trials", "counts must be >= 0");
  if (s.trial_slow > s.trial_successes + s.trial_failures)
    return bad("trial_slow", "cannot exceed the trials that reported");
  if (s.state == State::HalfOpen) {
    const HalfOpenOptions& h = o_.half_open;
    const int decided = s.trial_successes + s.trial_failures;
    if (h.decide == HalfOpenOptions::Decide::EachOutcome &&
        (s.trial_failures > 0 || s.trial_successes >= h.successes_to_close))
      return bad("trials", "these trials would already have decided the breaker");
    if (h.decide == HalfOpenOptions::Decide::AfterAllTrials && decided >= h.permitted_calls)
      return bad("trials", "these trials would already have decided the breaker");
  }
  if (auto r = window_.restore(s.window); !r) return Error{"snapshot." + r.error().message};

  state_ = s.state;
  mode_ = s.mode;
  // Never move the generation backwards: a ticket this breaker issued before the restore must
  // still arrive late.
  generation_ = std::max(s.generation, generation_ + 1);
  since_ = s.since;
  cooldown_ = s.cooldown;
  failed_trials_ = s.failed_trials;
  consecutive_failures_ = s.consecutive_failures;
  trial_successes_ = s.trial_successes;
  trial_failures_ = s.trial_failures;
  trial_slow_ = s.trial_slow;
  // Trials that were out when the snapshot was taken belong to a process that is gone; they
  // will never report, so their slots are free.
  trials_admitted_ = s.trial_successes + s.trial_failures;
  first_trial_at_.reset();
  counters_ = s.counters;
  fast_counts_.clear();
  return {};
}

}  // namespace cb
