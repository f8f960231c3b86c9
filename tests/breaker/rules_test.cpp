// One TEST_CASE per rule of the engine (docs/ENGINE.md), each named for the trap it guards against.
#include <doctest/doctest.h>

#include "cb/breaker/profiles.h"
#include "harness.h"

namespace cb::testing {
namespace {

BreakerOptions lab() { return profiles::lab(3s); }

TEST_CASE("consecutive failures trip and a success in between starts the count again") {
  Harness h(profiles::balancer());
  SUBCASE("four failures, a success, four failures: still CLOSED") {
    CHECK(h.calls("FFFFSFFFF") == "FFFFSFFFF");
    CHECK(h.state() == State::Closed);
    CHECK(h.breaker->status().metrics.consecutive_failures == 4);
  }
  SUBCASE("the fifth failure in a row opens, not the fifth in total") {
    CHECK(h.calls("FFFFSFFFFF") == "FFFFSFFFFF");
    CHECK(h.state() == State::Open);
    CHECK(h.transitions.back().reason == Reason::ConsecutiveFailures);
  }
  SUBCASE("ignored answers neither break nor extend the run") {
    CHECK(h.calls("FFIIFFIF") == "FFIIFFIF");
    CHECK(h.state() == State::Open);
  }
}

TEST_CASE("a refused call never reaches the backend and counts as neither success nor failure") {
  Harness h(profiles::balancer());
  CHECK(h.calls("FFFFF") == "FFFFF");
  REQUIRE(h.state() == State::Open);
  const Counters before = h.breaker->status().metrics.counters;
  const Admission a = h.breaker->try_acquire();
  CHECK(a.decision == Decision::RefusedOpen);
  CHECK(h.calls("SSSFFF") == "RRRRRR");
  const Counters after = h.breaker->status().metrics.counters;
  CHECK(after.successes == before.successes);
  CHECK(after.failures == before.failures);
  CHECK(after.permitted == before.permitted);
  CHECK(after.not_permitted == before.not_permitted + 7);
  SUBCASE("and the half-open count starts from the trials alone") {
    h.at(30);
    CHECK(h.calls("SS") == "SS");
    CHECK(h.state() == State::HalfOpen);  // 2 of the 3 needed; the refused successes did not count
    CHECK(h.calls("S") == "S");
    CHECK(h.state() == State::Closed);
  }
}

TEST_CASE("a failed trial reopens and restarts the cool-down from the trial's own time") {
  SUBCASE("probe: the cool-down restarts at the probe, not at the first trip") {
    Harness h(profiles::probe(1, 10s));
    CHECK(h.call(Verdict::Failure) == "fail");
    h.at(10);
    CHECK(h.call(Verdict::Failure) == "fail");  // the probe
    CHECK(h.state() == State::Open);
    CHECK(h.transitions.back().at == at_s(10));
    h.at(19.999999);
    CHECK(h.call(Verdict::Success) == "refused");  // the old opened_at would have let this through
    h.at(20);
    CHECK(h.call(Verdict::Success) == "ok");
    CHECK(h.state() == State::Closed);
  }
  SUBCASE("lesson: a trial that fails after 2 s reopens from when it failed") {
    Harness h(profiles::lesson());
    CHECK(h.calls("FFF") == "FFF");
    h.at(10);
    const Admission trial = h.breaker->try_acquire();
    REQUIRE(trial);
    h.at(12);  // the trial waited out a 2 s timeout
    CHECK(h.breaker->record(trial.ticket, {Verdict::Failure, 2s}) == RecordEffect::Counted);
    CHECK(h.state() == State::Open);
    h.at(21.999);
    CHECK(h.state() == State::Open);
    h.at(22);
    CHECK(h.state() == State::HalfOpen);
  }
}

TEST_CASE("every transition starts the new state with fresh counts") {
  SUBCASE("no failures carried into CLOSED") {
    Harness h(profiles::balancer());
    CHECK(h.calls("FFFFF") == "FFFFF");
    h.at(30);
    CHECK(h.calls("SSS") == "SSS");
    REQUIRE(h.state() == State::Closed);
    CHECK(h.calls("FFFF") == "FFFF");
    CHECK(h.state() == State::Closed);  // 4, not 4 + anything from before
    CHECK(h.calls("F") == "F");
    CHECK(h.state() == State::Open);
  }
  SUBCASE("no successes carried into HALF_OPEN") {
    Harness h(profiles::balancer());
    CHECK(h.calls("SSFFFFF") == "SSFFFFF");
    h.at(30);
    CHECK(h.calls("SS") == "SS");
    CHECK(h.state() == State::HalfOpen);
  }
  SUBCASE("the rate window is empty again after closing") {
    Harness h(lab());
    CHECK(h.calls("SSSFFF") == "SSSFFF");
    h.at(3);
    CHECK(h.calls("SSS") == "SSS");
    REQUIRE(h.state() == State::Closed);
    CHECK(h.breaker->status().metrics.window.calls == 0);
    CHECK(h.calls("FFFF") == "FFFF");  // 4 calls: under the minimum, whatever came before
    CHECK(h.state() == State::Closed);
  }
  SUBCASE("the generation changes with every transition") {
    Harness h(lab());
    const auto g0 = h.breaker->status().generation;
    CHECK(h.calls("FFFFF") == "FFFFF");
    CHECK(h.breaker->status().generation == g0 + 1);
    h.at(3);
    CHECK(h.breaker->status().generation == g0 + 2);
  }
}

TEST_CASE("at exactly opened_at + cooldown the breaker is already HALF_OPEN (>= - not >)") {
  Harness h(profiles::balancer());
  h.at(5);
  CHECK(h.calls("FFFFF") == "FFFFF");
  SUBCASE("one microsecond before: OPEN, and a call is refused") {
    h.clock.set(at_s(35) - 1us);
    CHECK(h.state() == State::Open);
    CHECK(h.call(Verdict::Success) == "refused");
  }
  SUBCASE("at the boundary, a status query sees HALF_OPEN") {
    h.at(35);
    CHECK(h.state() == State::HalfOpen);
    CHECK(h.path() == "CLOSED->OPEN OPEN->HALF_OPEN");
  }
  SUBCASE("at the boundary, a call is let through as a trial") {
    h.at(35);
    const Admission a = h.breaker->try_acquire();
    CHECK(a.permitted());
    CHECK(a.ticket.admitted_in == State::HalfOpen);
  }
  SUBCASE("noticed late, the transition is still stamped with the boundary") {
    h.at(90);
    CHECK(h.state() == State::HalfOpen);
    CHECK(h.transitions.back().at == at_s(35));
  }
  SUBCASE("OPEN reports how long is left") {
    h.at(20);
    const Status s = h.breaker->status();
    REQUIRE(s.open_remaining);
    CHECK(*s.open_remaining == 15s);
  }
}

TEST_CASE("a rate is judged only once the window holds the minimum number of calls") {
  Harness h(lab());
  SUBCASE("four failures in four calls is not a 100% failure rate yet") {
    CHECK(h.calls("FFFF") == "FFFF");
    CHECK(h.state() == State::Closed);
    CHECK_FALSE(h.breaker->status().metrics.failure_rate_percent.has_value());
    CHECK(h.calls("F") == "F");
    CHECK(h.state() == State::Open);
  }
  SUBCASE("one failed call does not open it (the lab's first common mistake)") {
    CHECK(h.call(Verdict::Failure) == "fail");
    CHECK(h.state() == State::Closed);
  }
}

TEST_CASE("the rate threshold is >=") {
  SUBCASE("lab: 3 successes then failures open on the 3rd failure (3 of 6 = 50%)") {
    Harness h(lab());
    CHECK(h.calls("SSSFFFFF") == "SSSFFFRR");
    CHECK(h.state() == State::Open);
    CHECK(h.transitions.back().reason == Reason::FailureRate);
    const Metrics m = h.breaker->status().metrics;
    CHECK(m.window.calls == 6);
    CHECK(m.window.failures == 3);
    REQUIRE(m.failure_rate_percent);
    CHECK(*m.failure_rate_percent == doctest::Approx(50.0));
  }
  SUBCASE("40%: 2 failures of 5 trips exactly at the threshold") {
    BreakerOptions o = lab();
    o.trip.failure_rate_percent = 40.0;
    Harness h(o);
    CHECK(h.calls("SSSF") == "SSSF");
    CHECK(h.calls("F") == "F");
    CHECK(h.state() == State::Open);
  }
  SUBCASE("just under the threshold stays closed") {
    Harness h(lab());
    CHECK(h.calls("SSSSSFFFF") == "SSSSSFFFF");  // 4 of 9 = 44%
    CHECK(h.state() == State::Closed);
  }
}

TEST_CASE("an ignored answer (a 4xx) is neither success nor failure") {
  Harness h(lab());
  SUBCASE("ten ignored calls leave an empty window") {
    CHECK(h.calls("IIIIIIIIII") == "IIIIIIIIII");
    CHECK(h.state() == State::Closed);
    const Metrics m = h.breaker->status().metrics;
    CHECK(m.window.calls == 0);
    CHECK(m.window.failures == 0);
    CHECK(m.counters.ignored == 10);
  }
  SUBCASE("ignored calls do not count toward the minimum") {
    CHECK(h.calls("FFFFIIIII") == "FFFFIIIII");
    CHECK(h.state() == State::Closed);
    CHECK(h.calls("F") == "F");
    CHECK(h.state() == State::Open);
  }
  SUBCASE("nor do they dilute the rate") {
    CHECK(h.calls("SSSIIIIIIFFF") == "SSSIIIIIIFFF");
    CHECK(h.state() == State::Open);
  }
  SUBCASE("an ignored trial gives its slot back") {
    CHECK(h.calls("FFFFF") == "FFFFF");
    h.at(3);
    CHECK(h.calls("IIII") == "IIII");
    CHECK(h.breaker->status().metrics.trials_admitted == 0);
    CHECK(h.calls("SSS") == "SSS");
    CHECK(h.state() == State::Closed);
  }
}

TEST_CASE("slow calls: strictly longer than the slow-call duration - judged by their own rate") {
  Harness h(lab());
  SUBCASE("5 successes over 3 s trip the 100% slow-call rule") {
    for (int i = 0; i < 5; ++i) CHECK(h.call(Verdict::Success, 3s + 1us) == "ok");
    CHECK(h.state() == State::Open);
    CHECK(h.transitions.back().reason == Reason::SlowCallRate);
    CHECK(h.breaker->status().metrics.counters.slow == 5);
  }
  SUBCASE("exactly 3 s is not slow") {
    for (int i = 0; i < 10; ++i) CHECK(h.call(Verdict::Success, 3s) == "ok");
    CHECK(h.state() == State::Closed);
    CHECK(h.breaker->status().metrics.counters.slow == 0);
  }
  SUBCASE("one fast call keeps the slow rate under 100%") {
    CHECK(h.call(Verdict::Success, 1ms) == "ok");
    for (int i = 0; i < 9; ++i) CHECK(h.call(Verdict::Success, 4s) == "ok");
    CHECK(h.state() == State::Closed);
  }
}

TEST_CASE("HALF_OPEN admits exactly the permitted number of trials") {
  Harness h(lab());
  CHECK(h.calls("FFFFF") == "FFFFF");
  h.at(3);
  const Admission t1 = h.breaker->try_acquire();
  const Admission t2 = h.breaker->try_acquire();
  const Admission t3 = h.breaker->try_acquire();
  CHECK((t1.permitted() && t2.permitted() && t3.permitted()));
  CHECK(h.breaker->try_acquire().decision == Decision::RefusedHalfOpenFull);
  SUBCASE("admitted, not in flight: a reported trial does not free a slot") {
    CHECK(h.breaker->record(t1.ticket, {Verdict::Success, 1ms}) == RecordEffect::Counted);
    CHECK(h.breaker->try_acquire().decision == Decision::RefusedHalfOpenFull);
  }
  SUBCASE("the three outcomes decide") {
    (void)h.breaker->record(t1.ticket, {Verdict::Success, 1ms});
    (void)h.breaker->record(t2.ticket, {Verdict::Success, 1ms});
    CHECK(h.state() == State::HalfOpen);
    (void)h.breaker->record(t3.ticket, {Verdict::Success, 1ms});
    CHECK(h.state() == State::Closed);
  }
}

TEST_CASE("a refused call's ticket is inert: recording it counts nothing, whichever path refused it") {
  Harness h(lab());
  CHECK(h.calls("FFFFF") == "FFFFF");
  SUBCASE("OPEN (the refusal without the lock)") {
    const Admission refused = h.breaker->try_acquire();
    REQUIRE(refused.decision == Decision::RefusedOpen);
    CHECK(h.breaker->record(refused.ticket, {Verdict::Failure, 1ms}) == RecordEffect::Refused);
    h.breaker->release(refused.ticket);
    CHECK(h.state() == State::Open);
  }
  SUBCASE("a full HALF_OPEN (under the lock): the trap was a fourth result counted as a trial") {
    h.at(3);
    const Admission t1 = h.breaker->try_acquire();
    const Admission t2 = h.breaker->try_acquire();
    const Admission t3 = h.breaker->try_acquire();
    const Admission refused = h.breaker->try_acquire();
    REQUIRE(refused.decision == Decision::RefusedHalfOpenFull);
    (void)h.breaker->record(t1.ticket, {Verdict::Success, 1ms});
    (void)h.breaker->record(t2.ticket, {Verdict::Success, 1ms});
    // Recorded as a success, the refusal would have been the third trial and closed the breaker.
    CHECK(h.breaker->record(refused.ticket, {Verdict::Success, 1ms}) == RecordEffect::Refused);
    CHECK(h.state() == State::HalfOpen);
    // Released, it would have freed a slot it never held.
    h.breaker->release(refused.ticket);
    CHECK(h.breaker->try_acquire().decision == Decision::RefusedHalfOpenFull);
    (void)h.breaker->record(t3.ticket, {Verdict::Success, 1ms});
    CHECK(h.state() == State::Closed);
  }
  SUBCASE("forced open") {
    h.breaker->force_open();
    const Admission refused = h.breaker->try_acquire();
    REQUIRE(refused.decision == Decision::RefusedForcedOpen);
    CHECK(h.breaker->record(refused.ticket, {Verdict::Failure, 1ms}) == RecordEffect::Refused);
  }
}

TEST_CASE("trials judged together: the trials' failure rate >= threshold reopens - else closes") {
  Harness h(lab());
  CHECK(h.calls("FFFFF") == "FFFFF");
  h.at(3);
  SUBCASE("3 of 3 succeed: CLOSED") {
    CHECK(h.calls("SSS") == "SSS");
    CHECK(h.state() == State::Closed);
    CHECK(h.transitions.back().reason == Reason::TrialsSucceeded);
  }
  SUBCASE("1 of 3 fails (33%): CLOSED; the first failure alone decides nothing") {
    CHECK(h.calls("F") == "F");
    CHECK(h.state() == State::HalfOpen);
    CHECK(h.calls("SS") == "SS");
    CHECK(h.state() == State::Closed);
  }
  SUBCASE("2 of 3 fail (67%): OPEN again, from the last trial's time") {
    h.at(4);
    CHECK(h.calls("SFF") == "SFF");
    CHECK(h.state() == State::Open);
    CHECK(h.transitions.back().reason == Reason::TrialFailureRate);
    CHECK(h.transitions.back().at == at_s(4));
  }
  SUBCASE("3 slow successes: OPEN again by the slow-call rate") {
    for (int i = 0; i < 3; ++i) CHECK(h.call(Verdict::Success, 5s) == "ok");
    CHECK(h.state() == State::Open);
    CHECK(h.transitions.back().reason == Reason::TrialSlowCallRate);
  }
}

TEST_CASE("trials that decide one by one: any failure reopens - N successes in a row close") {
  Harness h(profiles::balancer());
  CHECK(h.calls("FFFFF") == "FFFFF");
  h.at(30);
  SUBCASE("every call passes in the balancer's HALF_OPEN") {
    for (int i = 0; i < 5; ++i) CHECK(h.breaker->try_acquire().permitted());
  }
  SUBCASE("S S F: OPEN") {
    CHECK(h.calls("SSF") == "SSF");
    CHECK(h.state() == State::Open);
    CHECK(h.transitions.back().reason == Reason::TrialFailed);
  }
  SUBCASE("S S S: CLOSED") {
    CHECK(h.calls("SSS") == "SSS");
    CHECK(h.state() == State::Closed);
  }
}

TEST_CASE("a result that arrives after its state ended counts toward nothing") {
  Harness h(lab());
  SUBCASE("a CLOSED call reporting after the trip") {
    const Admission slow_call = h.breaker->try_acquire();
    CHECK(h.calls("FFFFF") == "FFFFF");
    REQUIRE(h.state() == State::Open);
    h.at(3);
    REQUIRE(h.state() == State::HalfOpen);
    CHECK(h.breaker->record(slow_call.ticket, {Verdict::Success, 4s}) == RecordEffect::Late);
    const Metrics m = h.breaker->status().metrics;
    CHECK(m.trial_successes == 0);
    CHECK(m.counters.late == 1);
  }
  SUBCASE("a trial of an earlier HALF_OPEN reporting in a later one") {
    CHECK(h.calls("FFFFF") == "FFFFF");
    h.at(3);
    const Admission old_trial = h.breaker->try_acquire();
    CHECK(h.calls("FF") == "FF");
    // The old trial never reports: max wait (60 s from t=3) reopens at 63, and after the 3 s
    // cool-down a new HALF_OPEN begins at 66.
    h.at(66);
    REQUIRE(h.state() == State::HalfOpen);
    CHECK(h.breaker->record(old_trial.ticket, {Verdict::Success, 1ms}) == RecordEffect::Late);
    CHECK(h.calls("SSS") == "SSS");
    CHECK(h.state() == State::Closed);
  }
  SUBCASE("a trial reporting after the breaker closed") {
    CHECK(h.calls("FFFFF") == "FFFFF");
    h.at(3);
    const Admission t1 = h.breaker->try_acquire();
    const Admission t2 = h.breaker->try_acquire();
    const Admission t3 = h.breaker->try_acquire();
    (void)h.breaker->record(t1.ticket, {Verdict::Success, 1ms});
    (void)h.breaker->record(t2.ticket, {Verdict::Success, 1ms});
    h.breaker->reset();
    CHECK(h.breaker->record(t3.ticket, {Verdict::Failure, 1ms}) == RecordEffect::Late);
    CHECK(h.breaker->status().metrics.window.calls == 0);
  }
  SUBCASE("a default ticket is a refusal's: inert") {
    CHECK(h.breaker->record(Ticket{}, {Verdict::Failure, 1ms}) == RecordEffect::Refused);
  }
}

TEST_CASE("HALF_OPEN cannot be pinned by a trial that never reports") {
  BreakerOptions o = lab();
  o.half_open.max_wait = 10s;
  Harness h(o);
  CHECK(h.calls("FFFFF") == "FFFFF");
  h.at(3);
  const Admission lost = h.breaker->try_acquire();  // its caller vanished
  REQUIRE(lost);
  CHECK(h.calls("SS") == "SS");
  h.clock.set(at_s(13) - 1us);
  CHECK(h.state() == State::HalfOpen);
  SUBCASE("at first trial + max_wait it reopens, stamped with that moment") {
    h.at(13);
    CHECK(h.state() == State::Open);
    CHECK(h.transitions.back().reason == Reason::HalfOpenTimeout);
    CHECK(h.transitions.back().at == at_s(13));
    h.at(16);
    CHECK(h.state() == State::HalfOpen);
    CHECK(h.calls("SSS") == "SSS");
    CHECK(h.state() == State::Closed);
  }
  SUBCASE("noticed much later, the whole chain of transitions is reported in order") {
    h.at(100);
    CHECK(h.state() == State::HalfOpen);
    CHECK(h.path() == "CLOSED->OPEN OPEN->HALF_OPEN HALF_OPEN->OPEN OPEN->HALF_OPEN");
    CHECK(h.transitions[3].at == at_s(16));
  }
  SUBCASE("with max_wait 0 it waits forever") {
    BreakerOptions forever = lab();
    forever.half_open.max_wait = 0s;
    Harness f(forever);
    CHECK(f.calls("FFFFF") == "FFFFF");
    f.at(3);
    (void)f.breaker->try_acquire();
    f.at(1e6);
    CHECK(f.state() == State::HalfOpen);
  }
}

TEST_CASE("release gives a permit back unused") {
  Harness h(profiles::lesson());
  CHECK(h.calls("FFF") == "FFF");
  h.at(10);
  const Admission trial = h.breaker->try_acquire();
  REQUIRE(trial);
  CHECK(h.breaker->try_acquire().decision == Decision::RefusedHalfOpenFull);
  h.breaker->release(trial.ticket);
  CHECK(h.breaker->status().metrics.counters.released == 1);
  CHECK(h.call(Verdict::Success) == "ok");
  CHECK(h.state() == State::Closed);
}

TEST_CASE("the cool-down can grow after each failed trial - up to a cap") {
  BreakerOptions o = profiles::probe(1, 10s);
  o.cooldown.multiplier = 2.0;
  o.cooldown.cap = 35s;
  Harness h(o);
  auto cooldown = [&] { return h.breaker->status().cooldown; };
  double t = 0;
  CHECK(h.call(Verdict::Failure) == "fail");
  CHECK(cooldown() == 10s);
  for (auto expected : {20s, 35s, 35s}) {
    t += std::chrono::duration<double>(cooldown()).count();
    h.at(t);
    CHECK(h.call(Verdict::Failure) == "fail");  // a failed probe
    CHECK(cooldown() == expected);
  }
  SUBCASE("closing starts it again from the base") {
    t += 35;
    h.at(t);
    CHECK(h.call(Verdict::Success) == "ok");
    CHECK(h.call(Verdict::Failure) == "fail");
    CHECK(cooldown() == 10s);
  }
}

TEST_CASE("jitter lengthens the cool-down by up to jitter x cool-down - from the injected source") {
  struct Fixed final : RandomSource {
    double value;
    explicit Fixed(double v) : value(v) {}
    double next_unit() override { return value; }
  };
  BreakerOptions o = profiles::probe(1, 10s);
  o.cooldown.jitter = 0.2;
  SUBCASE("a draw of 0.5 adds 10%") {
    Fixed half(0.5);
    Harness h(o, &half);
    CHECK(h.call(Verdict::Failure) == "fail");
    CHECK(h.breaker->status().cooldown == 11s);
  }
  SUBCASE("a draw of 0 adds nothing: jitter never shortens") {
    Fixed zero(0.0);
    Harness h(o, &zero);
    CHECK(h.call(Verdict::Failure) == "fail");
    CHECK(h.breaker->status().cooldown == 10s);
  }
  SUBCASE("without a random source, the breaker is not built") {
    ManualClock clock;
    auto b = CircuitBreaker::create(o, clock);
    REQUIRE_FALSE(b.ok());
    CHECK(b.error().message.find("cooldown.jitter") == 0);
  }
}

TEST_CASE("manual overrides: forced open - forced closed - disabled - reset") {
  Harness h(profiles::balancer());
  SUBCASE("forced open refuses whatever the time, until reset") {
    h.breaker->force_open();
    CHECK(h.state() == State::Open);
    CHECK(h.breaker->try_acquire().decision == Decision::RefusedForcedOpen);
    h.at(1e6);
    CHECK(h.state() == State::Open);
    CHECK_FALSE(h.breaker->status().open_remaining.has_value());
    h.breaker->reset();
    CHECK(h.state() == State::Closed);
    CHECK(h.path() == "CLOSED->OPEN OPEN->CLOSED");
    CHECK(h.transitions[0].reason == Reason::ForcedOpen);
    CHECK(h.transitions[1].reason == Reason::Reset);
  }
  SUBCASE("forced closed counts but never trips") {
    h.breaker->force_closed();
    CHECK(h.calls("FFFFFFFFFF") == "FFFFFFFFFF");
    CHECK(h.state() == State::Closed);
    CHECK(h.breaker->status().metrics.consecutive_failures == 10);
    CHECK(h.breaker->status().mode == Mode::ForcedClosed);
  }
  SUBCASE("disabled lets everything through and records nothing") {
    h.breaker->disable();
    CHECK(h.calls("FFFFFFFFFF") == "FFFFFFFFFF");
    CHECK(h.state() == State::Closed);
    CHECK(h.breaker->status().metrics.counters.failures == 0);
  }
  SUBCASE("forcing an OPEN breaker closed starts fresh") {
    CHECK(h.calls("FFFFF") == "FFFFF");
    h.breaker->force_closed();
    CHECK(h.state() == State::Closed);
    CHECK(h.transitions.back().reason == Reason::ForcedClosed);
    h.breaker->reset();
    CHECK(h.calls("FFFF") == "FFFF");
    CHECK(h.state() == State::Closed);
  }
}

TEST_CASE("time-based window: only the calls of the last N seconds are judged") {
  BreakerOptions o = lab();
  o.trip.window = {WindowOptions::Kind::Time, 10, 5};
  Harness h(o);
  h.at(0);
  CHECK(h.calls("FFFF") == "FFFF");  // 4 failures at t=0
  h.at(10);                          // t=0's second has left a 10 s window
  CHECK(h.calls("S") == "S");
  CHECK(h.breaker->status().metrics.window.calls == 1);
  CHECK(h.calls("SSSS") == "SSSS");
  CHECK(h.calls("FFFF") == "FFFF");  // 4 of 9: 44%
  CHECK(h.state() == State::Closed);
  CHECK(h.calls("F") == "F");  // 5 of 10: 50%
  CHECK(h.state() == State::Open);
}

TEST_CASE("time is lazy: only a rule that needs the time reads the clock") {
  struct CountingClock final : Clock {
    mutable int reads = 0;
    TimePoint t{};
    TimePoint now() const noexcept override {
      ++reads;
      return t;
    }
  } clock;
  auto b = CircuitBreaker::create(profiles::lab(3s), clock).value();
  const int at_creation = clock.reads;
  for (int i = 0; i < 100; ++i) {
    const Admission a = b->try_acquire();
    (void)b->record(a.ticket, {Verdict::Success, 1ms});
  }
  CHECK(clock.reads == at_creation);  // CLOSED, count window, successes: no time needed
  for (int i = 0; i < 5; ++i) {       // 5 of the last 10 failed: 50% trips on the 5th
    const Admission a = b->try_acquire();
    (void)b->record(a.ticket, {Verdict::Failure, 1ms});
  }
  CHECK(clock.reads == at_creation + 1);  // the trip stamps opened_at
  clock.t += 3s;
  CHECK(b->state() == State::HalfOpen);  // nobody called; asking was enough
}

}  // namespace
}  // namespace cb::testing
