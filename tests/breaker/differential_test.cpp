// Random traces through the engine and through a reference model written here, with nothing
// shared but the options: a plain list for the window, counts recomputed from scratch on every
// call, time caught up eagerly before every step. Any difference in a decision, an effect, a
// state or a transition fails the test with the trace's seed and step.
#include <doctest/doctest.h>

#include <deque>
#include <map>
#include <random>

#include "cb/breaker/profiles.h"
#include "harness.h"

namespace cb::testing {
namespace {

class Reference {
 public:
  Reference(BreakerOptions o, RandomSource* random) : o_(std::move(o)), random_(random) {}

  std::vector<Transition> transitions;
  Counters counters;  // the engine's may be bumped on paths without its lock; the sums must agree

  std::pair<Decision, Ticket> acquire(TimePoint now) {
    catch_up(now);
    // A refusal's ticket is inert (kRefused) whichever state refused it.
    if (state_ == State::Open) return refuse(Decision::RefusedOpen);
    if (state_ == State::HalfOpen) {
      const int limit = o_.half_open.permitted_calls;
      if (limit > 0 && admitted_ >= limit) return refuse(Decision::RefusedHalfOpenFull);
      if (admitted_ - ok_ - bad_ == 0) first_out_ = now;
      ++admitted_;
    }
    ++counters.permitted;
    return {Decision::Permitted, {gen_, state_}};
  }

  RecordEffect record(const Ticket& t, Verdict v, Duration elapsed, TimePoint now) {
    catch_up(now);
    if (t.generation == kRefused) return RecordEffect::Refused;
    if (t.generation != gen_) {
      ++counters.late;
      return RecordEffect::Late;
    }
    if (v == Verdict::Ignored) {
      ++counters.ignored;
      if (state_ == State::HalfOpen) --admitted_;
      return RecordEffect::Ignored;
    }
    const bool failure = v == Verdict::Failure;
    const bool slow = o_.trip.slow_call_duration > Duration::zero() && elapsed > o_.trip.slow_call_duration;
    ++(failure ? counters.failures : counters.successes);
    counters.slow += slow ? 1 : 0;
    if (state_ == State::Closed) {
      calls_.push_back({now, failure, slow});
      run_ = failure ? run_ + 1 : 0;
      judge_closed(now);
    } else {
      (failure ? bad_ : ok_) += 1;
      slow_ += slow ? 1 : 0;
      judge_half_open(now, failure);
    }
    return RecordEffect::Counted;
  }

  void release(const Ticket& t) {
    if (t.generation == kRefused || t.generation != gen_) return;
    ++counters.released;
    if (state_ == State::HalfOpen && t.admitted_in == State::HalfOpen) --admitted_;
  }

  State state(TimePoint now) {
    catch_up(now);
    return state_;
  }

 private:
  struct Call {
    TimePoint at;
    bool failure;
    bool slow;
  };

  std::pair<Decision, Ticket> refuse(Decision why) {
    ++counters.not_permitted;
    return {why, {kRefused, state_}};
  }

  static std::int64_t second(TimePoint t) {
    const auto us = t.time_since_epoch().count();
    return us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
  }

  void catch_up(TimePoint now) {
    for (;;) {
      if (state_ == State::Open && now >= since_ + cooldown_) {
        go(State::HalfOpen, since_ + cooldown_, Reason::CooldownElapsed);
      } else if (state_ == State::HalfOpen && o_.half_open.max_wait > Duration::zero() && admitted_ - ok_ - bad_ > 0 &&
                 now >= first_out_ + o_.half_open.max_wait) {
        open(first_out_ + o_.half_open.max_wait, Reason::HalfOpenTimeout, true);
      } else {
        return;
      }
    }
  }

  // The calls still in the window, counted from scratch.
  std::vector<Call> live(TimePoint now) const {
    std::vector<Call> out;
    const auto& w = o_.trip.window;
    if (w.kind == WindowOptions::Kind::Count) {
      const std::size_t n = std::min(calls_.size(), static_cast<std::size_t>(w.size));
      out.assign(calls_.end() - static_cast<std::ptrdiff_t>(n), calls_.end());
    } else {
      for (const Call& c : calls_)
        if (second(c.at) > second(now) - w.size) out.push_back(c);
    }
    return out;
  }

  static bool at_least(int count, int total, double percent) { return count * 100.0 >= percent * total; }

  void judge_closed(TimePoint now) {
    const auto& t = o_.trip;
    if (calls_.back().failure && t.consecutive_failures > 0 && run_ >= t.consecutive_failures) {
      open(now, Reason::ConsecutiveFailures, false);
      return;
    }
    const auto in = live(now);
    const int n = static_cast<int>(in.size());
    if (n < t.window.minimum_calls) return;
    int failures = 0;
    int slow = 0;
    for (const Call& c : in) {
      failures += c.failure ? 1 : 0;
      slow += c.slow ? 1 : 0;
    }
    if (t.failure_rate_percent && at_least(failures, n, *t.failure_rate_percent)) {
      open(now, Reason::FailureRate, false);
    } else if (t.slow_call_rate_percent && at_least(slow, n, *t.slow_call_rate_percent)) {
      open(now, Reason::SlowCallRate, false);
    }
  }

  void judge_half_open(TimePoint now, bool failure) {
    const auto& h = o_.half_open;
    if (h.decide == HalfOpenOptions::Decide::EachOutcome) {
      if (failure) {
        open(now, Reason::TrialFailed, true);
      } else if (ok_ >= h.successes_to_close) {
        go(State::Closed, now, Reason::TrialsSucceeded);
      }
      return;
    }
    const int n = ok_ + bad_;
    if (n < h.permitted_calls) return;
    const auto& t = o_.trip;
    if (t.failure_rate_percent && at_least(bad_, n, *t.failure_rate_percent)) {
      open(now, Reason::TrialFailureRate, true);
    } else if (t.slow_call_rate_percent && at_least(slow_, n, *t.slow_call_rate_percent)) {
      open(now, Reason::TrialSlowCallRate, true);
    } else {
      go(State::Closed, now, Reason::TrialsSucceeded);
    }
  }

  void open(TimePoint at, Reason why, bool failed_trial) {
    failed_trials_ = failed_trial ? failed_trials_ + 1 : 0;
    const auto& c = o_.cooldown;
    double us = static_cast<double>(c.base.count());
    for (int i = 0; i < failed_trials_ && c.multiplier > 1.0 && us < static_cast<double>(c.cap.count()); ++i)
      us *= c.multiplier;
    if (c.multiplier > 1.0 && failed_trials_ > 0) us = std::min(us, static_cast<double>(c.cap.count()));
    if (c.jitter > 0) us += us * c.jitter * random_->next_unit();
    cooldown_ = Duration{std::llround(us)};
    go(State::Open, at, why);
  }

  void go(State to, TimePoint at, Reason why) {
    transitions.push_back({state_, to, at, why, ++gen_});
    ++counters.transitions;
    if (to != State::Open) {
      calls_.clear();
      run_ = 0;
      admitted_ = ok_ = bad_ = slow_ = 0;
    }
    if (to == State::Closed) failed_trials_ = 0;
    state_ = to;
    since_ = at;
  }

  BreakerOptions o_;
  RandomSource* random_;
  State state_ = State::Closed;
  std::uint64_t gen_ = 1;
  TimePoint since_{};
  Duration cooldown_{0};
  int failed_trials_ = 0;
  std::deque<Call> calls_;
  int run_ = 0;
  int admitted_ = 0, ok_ = 0, bad_ = 0, slow_ = 0;
  TimePoint first_out_{};
};

struct Config {
  const char* name;
  BreakerOptions options;
};

std::vector<Config> configs() {
  std::vector<Config> out{
      {"lab", profiles::lab(3s)},
      {"payment", profiles::payment(5s)},
      {"notifications", profiles::notifications(5s)},
      {"balancer", profiles::balancer()},
      {"probe 1/0s", profiles::probe(1, 0s)},
      {"probe 2/10s", profiles::probe(2, 10s)},
      {"probe 4/1s", profiles::probe(4, 1s)},
      {"lesson", profiles::lesson()},
  };
  BreakerOptions timed = profiles::lab(3s);
  timed.trip.window = {WindowOptions::Kind::Time, 4, 3};
  out.push_back({"time window", timed});
  BreakerOptions growing = profiles::probe(2, 2s);
  growing.cooldown.multiplier = 1.5;
  growing.cooldown.cap = 7s;
  growing.cooldown.jitter = 0.3;
  out.push_back({"growing + jitter", growing});
  BreakerOptions impatient = profiles::lab(2s);
  impatient.half_open.max_wait = 3s;
  out.push_back({"max wait 3 s", impatient});
  BreakerOptions both = profiles::lab(2s);
  both.trip.consecutive_failures = 3;
  both.half_open.permitted_calls = 5;
  out.push_back({"consecutive and rate, 5 trials", both});
  BreakerOptions slow = profiles::lab(2s);
  slow.trip.slow_call_rate_percent = 50.0;
  slow.trip.failure_rate_percent = 80.0;
  out.push_back({"slow-call rate 50%", slow});
  BreakerOptions open_door = profiles::balancer();
  open_door.half_open.successes_to_close = 2;
  open_door.cooldown.base = 1500ms;
  out.push_back({"unlimited trials, 2 to close", open_door});
  return out;
}

TEST_CASE("differential: the engine agrees with the reference model on random traces") {
  std::map<Reason, int> reasons_seen;  // so the test cannot pass by never leaving CLOSED
  for (const Config& config : configs()) {
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
      CAPTURE(config.name);
      CAPTURE(seed);
      std::mt19937_64 rng(seed);
      SeededRandom engine_random(seed);
      SeededRandom reference_random(seed);
      Harness engine(config.options, &engine_random);
      Reference ref(config.options, &reference_random);
      const Duration cooldown = config.options.cooldown.base;
      std::map<int, Ticket> held;  // tickets of calls still out, by slot
      TimePoint now{};
      double failure_odds = 0.5;
      unsigned slow_one_in = 8;
      int step = 0;
      for (; step < 250; ++step) {
        CAPTURE(step);
        const auto pick = rng() % 100;
        // Time moves by nothing, a little, the exact cool-down, or a microsecond short of it:
        // the boundaries are where breakers go wrong.
        if (pick < 15) {
          static constexpr std::array<Duration, 6> kSteps{0us, 1us, 250ms, 1s, 3s, 7s};
          Duration dt = kSteps[rng() % kSteps.size()];
          if (rng() % 4 == 0) dt = cooldown - ((rng() % 2) ? 1us : 0us);
          if (dt < 0us) dt = 0us;
          now += dt;
          engine.clock.set(now);
        }
        if (pick % 25 == 0) failure_odds = static_cast<double>(rng() % 11) / 10.0;
        if (pick % 25 == 1) slow_one_in = 1U + static_cast<unsigned>(rng() % 8);
        const double roll = static_cast<double>(rng() % 1000) / 1000.0;
        const Verdict v = roll < failure_odds * 0.9 ? Verdict::Failure
                          : roll < 0.95             ? Verdict::Success
                                                    : Verdict::Ignored;
        const Duration elapsed = (rng() % slow_one_in == 0) ? 3s + 1us : 20ms;
        const int slot = static_cast<int>(rng() % 4);

        if (pick < 60) {  // a call that reports at once
          const Admission a = engine.breaker->try_acquire();
          const auto [d, t] = ref.acquire(now);
          REQUIRE(a.decision == d);
          if (a) REQUIRE(engine.breaker->record(a.ticket, {v, elapsed}) == ref.record(t, v, elapsed, now));
        } else if (pick < 75) {  // a call that stays out
          if (held.count(slot) != 0) continue;
          const Admission a = engine.breaker->try_acquire();
          const auto [d, t] = ref.acquire(now);
          REQUIRE(a.decision == d);
          if (a) held[slot] = a.ticket;
        } else if (pick < 90) {  // one comes back
          auto it = held.find(slot);
          if (it == held.end()) continue;
          REQUIRE(engine.breaker->record(it->second, {v, elapsed}) == ref.record(it->second, v, elapsed, now));
          held.erase(it);
        } else if (pick < 93) {  // one is cancelled
          auto it = held.find(slot);
          if (it == held.end()) continue;
          engine.breaker->release(it->second);
          ref.release(it->second);
          held.erase(it);
        }
        REQUIRE(engine.state() == ref.state(now));
      }
      REQUIRE(engine.breaker->status().metrics.counters == ref.counters);
      REQUIRE(engine.transitions.size() == ref.transitions.size());
      for (const Transition& t : engine.transitions) ++reasons_seen[t.reason];
      for (std::size_t i = 0; i < ref.transitions.size(); ++i) {
        CAPTURE(i);
        const Transition& e = engine.transitions[i];
        const Transition& r = ref.transitions[i];
        REQUIRE(e.from == r.from);
        REQUIRE(e.to == r.to);
        REQUIRE(e.at == r.at);
        REQUIRE(e.reason == r.reason);
        REQUIRE(e.generation == r.generation);
      }
    }
  }
  for (Reason r : {Reason::ConsecutiveFailures, Reason::FailureRate, Reason::SlowCallRate, Reason::CooldownElapsed,
                   Reason::TrialFailed, Reason::TrialFailureRate, Reason::TrialSlowCallRate, Reason::HalfOpenTimeout,
                   Reason::TrialsSucceeded}) {
    CAPTURE(to_string(r));
    CHECK(reasons_seen[r] > 0);
  }
}

}  // namespace
}  // namespace cb::testing
